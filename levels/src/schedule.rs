//! Which levels each epoch gets: an interval per level, counted in
//! checkpoints, as FTI's `ckpt_l1`..`ckpt_l4` (`--levels 1:1,2:2,3:4,4:8`:
//! every checkpoint L1, every 2nd L2, every 4th L3, every 8th L4). Every
//! image is written to L1 first, so L1 is in every epoch.

use std::fmt;
use std::str::FromStr;

use crate::Level;

/// Intervals of the levels above L1 (`None`: never).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    every: [Option<u64>; 3],
}

impl Schedule {
    /// A job on one host: L1, and L4 at every checkpoint (a copy off the
    /// node that a lost disk does not take).
    pub const ONE_HOST: Schedule = Schedule {
        every: [None, None, Some(1)],
    };

    /// A job on several hosts: L1, a partner copy on another host (L2) and
    /// L4, at every checkpoint.
    pub const SEVERAL_HOSTS: Schedule = Schedule {
        every: [Some(1), None, Some(1)],
    };

    /// The default for a job on `hosts` hosts.
    pub fn default_for(hosts: usize) -> Schedule {
        if hosts > 1 {
            Schedule::SEVERAL_HOSTS
        } else {
            Schedule::ONE_HOST
        }
    }

    /// The interval of `level` in checkpoints (`None`: never).
    pub fn every(&self, level: Level) -> Option<u64> {
        match level {
            Level::Local => Some(1),
            l => self.every[l.number() as usize - 2],
        }
    }

    /// The levels of epoch `epoch` (epochs count from 1), L1 first.
    pub fn levels_of(&self, epoch: u64) -> Vec<Level> {
        Level::ALL
            .into_iter()
            .filter(|&l| self.every(l).is_some_and(|n| epoch.is_multiple_of(n)))
            .collect()
    }
}

/// What is wrong with a `--levels` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("{0:?} is not LEVEL:EVERY (e.g. 2:4, every 4th checkpoint at L2)")]
    NotAPair(String),
    #[error(transparent)]
    Level(#[from] crate::level::NotALevel),
    #[error("{0:?}: EVERY must be a number of checkpoints, 1 or more")]
    NotAnInterval(String),
    #[error("{0} is given twice or more")]
    Twice(Level),
    #[error("L1 comes with every checkpoint (each image is written there first): 1:{0} cannot be; give 1:1 or leave L1 out")]
    LocalNotEvery(u64),
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    /// `LEVEL:EVERY,...`; levels left out are never taken (L1 always is).
    fn from_str(s: &str) -> Result<Schedule, ScheduleError> {
        let mut every = [None; 3];
        let mut seen = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (level, n) = item
                .split_once(':')
                .ok_or_else(|| ScheduleError::NotAPair(item.to_string()))?;
            let level: Level = level.parse()?;
            let n = n
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| ScheduleError::NotAnInterval(item.to_string()))?;
            if seen.contains(&level) {
                return Err(ScheduleError::Twice(level));
            }
            seen.push(level);
            match level {
                Level::Local if n != 1 => return Err(ScheduleError::LocalNotEvery(n)),
                Level::Local => {}
                l => every[l.number() as usize - 2] = Some(n),
            }
        }
        Ok(Schedule { every })
    }
}

impl fmt::Display for Schedule {
    /// The form `--levels` reads: `1:1,2:2,4:8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = Level::ALL
            .into_iter()
            .filter_map(|l| self.every(l).map(|n| format!("{}:{n}", l.number())))
            .collect();
        f.write_str(&items.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Level::*;

    #[test]
    fn a_schedule_names_the_levels_of_each_epoch() {
        let s: Schedule = "1:1,2:2,3:4,4:8".parse().unwrap();
        assert_eq!(s.levels_of(1), [Local]);
        assert_eq!(s.levels_of(2), [Local, Partner]);
        assert_eq!(s.levels_of(4), [Local, Partner, Erasure]);
        assert_eq!(s.levels_of(8), [Local, Partner, Erasure, Global]);
        assert_eq!(s.to_string(), "1:1,2:2,3:4,4:8");
        assert_eq!(
            "L3:2, global:3".parse::<Schedule>().unwrap().to_string(),
            "1:1,3:2,4:3"
        );
        assert_eq!(Schedule::default_for(1).levels_of(5), [Local, Global]);
        assert_eq!(
            Schedule::default_for(2).levels_of(5),
            [Local, Partner, Global]
        );
        assert_eq!("".parse::<Schedule>().unwrap().levels_of(3), [Local]);
    }

    #[test]
    fn bad_schedules_say_what_is_wrong() {
        let err = |s: &str| s.parse::<Schedule>().unwrap_err().to_string();
        assert_eq!(
            err("2"),
            "\"2\" is not LEVEL:EVERY (e.g. 2:4, every 4th checkpoint at L2)"
        );
        assert!(err("5:1").contains("\"5\" is not a checkpoint level"));
        assert_eq!(
            err("2:0"),
            "\"2:0\": EVERY must be a number of checkpoints, 1 or more"
        );
        assert_eq!(err("2:1,L2:3"), "L2 (partner) is given twice or more");
        assert!(err("1:2").starts_with("L1 comes with every checkpoint"));
    }
}
