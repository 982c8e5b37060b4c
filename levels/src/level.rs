//! The four levels and how users name them (`--checkpoint-level`, FTI's
//! configuration and API use the numbers).

use std::fmt;
use std::str::FromStr;

/// A storage level, by FTI's numbering: each level keeps what the one below
/// keeps and survives more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// L1: each process's image on its node's local storage (survives a
    /// process crash).
    Local = 1,
    /// L2: L1 plus a copy on a partner process of another host (survives the
    /// loss of a host, unless its partner's host goes too).
    Partner = 2,
    /// L3: L1 plus Reed-Solomon parity across groups of processes on distinct
    /// hosts (survives the loss of up to half of each group).
    Erasure = 3,
    /// L4: the images in the job's global checkpoint directory (survives the
    /// loss of every host but the file system).
    Global = 4,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Local, Level::Partner, Level::Erasure, Level::Global];

    pub fn number(self) -> u8 {
        self as u8
    }

    /// The level numbered `n` (1 to 4).
    pub fn from_number(n: u8) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.number() == n)
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::Local => "local",
            Level::Partner => "partner",
            Level::Erasure => "erasure",
            Level::Global => "global",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{} ({})", self.number(), self.name())
    }
}

/// A level that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a checkpoint level: 1 (local), 2 (partner), 3 (erasure) or 4 (global)")]
pub struct NotALevel(pub String);

impl FromStr for Level {
    type Err = NotALevel;

    /// `1`..`4`, `L1`..`L4`, or the level's name (`rs` for erasure too).
    fn from_str(s: &str) -> Result<Level, NotALevel> {
        let t = s.trim().to_ascii_lowercase();
        let number = t.strip_prefix('l').unwrap_or(&t);
        if let Some(l) = number.parse::<u8>().ok().and_then(Level::from_number) {
            return Ok(l);
        }
        match t.as_str() {
            "local" => Ok(Level::Local),
            "partner" => Ok(Level::Partner),
            "erasure" | "rs" | "reed-solomon" => Ok(Level::Erasure),
            "global" => Ok(Level::Global),
            _ => Err(NotALevel(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_read_by_number_and_by_name() {
        for l in Level::ALL {
            assert_eq!(l.number().to_string().parse::<Level>(), Ok(l));
            assert_eq!(format!("L{}", l.number()).parse::<Level>(), Ok(l));
            assert_eq!(l.name().parse::<Level>(), Ok(l));
        }
        assert_eq!("RS".parse::<Level>(), Ok(Level::Erasure));
        assert!("5".parse::<Level>().is_err());
        assert_eq!(
            "0".parse::<Level>().unwrap_err().to_string(),
            "\"0\" is not a checkpoint level: 1 (local), 2 (partner), 3 (erasure) or 4 (global)"
        );
        assert!(Level::Local < Level::Global);
    }
}
