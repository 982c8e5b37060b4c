//! When committed data goes to files: after K commits of a checkpoint since
//! its last flush, or T seconds after its first unflushed commit, whichever
//! comes first (`--ckpt-service-flush K`, `Ts`, `K,Ts` or `never`: only when
//! the job ends).

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushPolicy {
    pub commits: Option<u32>,
    pub every: Option<Duration>,
}

impl Default for FlushPolicy {
    /// Every 10 commits or 30 s.
    fn default() -> Self {
        FlushPolicy {
            commits: Some(10),
            every: Some(Duration::from_secs(30)),
        }
    }
}

impl FlushPolicy {
    /// Reads `K`, `Ts`, `K,Ts` (either order) or `never`.
    pub fn parse(text: &str) -> Result<FlushPolicy, String> {
        let bad = |why: &str| {
            format!("--ckpt-service-flush {text:?}: {why} (expected K commits, T seconds as Ts, both as K,Ts, or never)")
        };
        if text.trim() == "never" {
            return Ok(FlushPolicy {
                commits: None,
                every: None,
            });
        }
        let mut p = FlushPolicy {
            commits: None,
            every: None,
        };
        for part in text.split(',').map(str::trim) {
            if let Some(secs) = part.strip_suffix('s') {
                let s: f64 = secs
                    .parse()
                    .map_err(|_| bad(&format!("{part:?} is not a number of seconds")))?;
                if !(s > 0.0 && s.is_finite()) || p.every.is_some() {
                    return Err(bad(&format!("{part:?}")));
                }
                p.every = Some(Duration::from_secs_f64(s));
            } else {
                let k: u32 = part
                    .parse()
                    .map_err(|_| bad(&format!("{part:?} is not a count of commits")))?;
                if k == 0 || p.commits.is_some() {
                    return Err(bad(&format!("{part:?}")));
                }
                p.commits = Some(k);
            }
        }
        Ok(p)
    }

    /// Whether a checkpoint with `unflushed` commits, the first of them
    /// `age` ago, is due.
    pub fn due(&self, unflushed: u32, age: Duration) -> bool {
        unflushed > 0
            && (self.commits.is_some_and(|k| unflushed >= k)
                || self.every.is_some_and(|t| age >= t))
    }

    /// The words that give it on the command line.
    pub fn to_arg(&self) -> String {
        match (self.commits, self.every) {
            (None, None) => "never".into(),
            (Some(k), None) => k.to_string(),
            (None, Some(t)) => format!("{}s", t.as_secs_f64()),
            (Some(k), Some(t)) => format!("{k},{}s", t.as_secs_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_round_trip() {
        for text in ["3", "2.5s", "4,10s", "never"] {
            let p = FlushPolicy::parse(text).unwrap();
            assert_eq!(FlushPolicy::parse(&p.to_arg()).unwrap(), p, "{text}");
        }
        assert_eq!(
            FlushPolicy::parse("10s,4").unwrap(),
            FlushPolicy::parse("4,10s").unwrap()
        );
        for bad in ["", "0", "x", "-1s", "1,2", "1s,2s"] {
            let e = FlushPolicy::parse(bad).unwrap_err();
            assert!(e.contains("--ckpt-service-flush"), "{e}");
        }
        let p = FlushPolicy::parse("3,1s").unwrap();
        assert!(!p.due(0, Duration::from_secs(9)));
        assert!(!p.due(2, Duration::ZERO));
        assert!(p.due(3, Duration::ZERO));
        assert!(p.due(1, Duration::from_secs(1)));
    }
}
