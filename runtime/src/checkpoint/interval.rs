//! How often checkpoints are taken from outside (`--checkpoint-interval`):
//! a fixed number of seconds, or `auto`, which follows what the job's own
//! checkpoints cost.
//!
//! `auto` takes Daly's optimum for a checkpoint cost C and a mean time between
//! failures M (Young's sqrt(2CM) with Daly's higher-order terms; J. T. Daly,
//! "A higher order estimate of the optimum checkpoint interval for restart
//! dumps", FGCS 2006), and never a period shorter than 100 C, at which
//! checkpoints take 1% of the run (the budget of seed 002, section 5.4): a
//! short MTBF then costs more lost work rather than more checkpoints. C is
//! the last checkpoint's application stall plus the write of its image (the
//! time the application shares the machine with the writer); M is
//! `--mtbf`, else a node's MTBF (five years) over the job's nodes. Before any
//! checkpoint has been measured, the first is taken after a tenth of M, at
//! most a minute.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A node's mean time between failures when `--mtbf` does not say.
pub(crate) const NODE_MTBF: Duration = Duration::from_secs(5 * 365 * 24 * 3600);
/// The longest wait for the first checkpoint of `auto`.
const FIRST_AT_MOST: Duration = Duration::from_secs(60);

/// What `--checkpoint-interval` asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Interval {
    Every(Duration),
    Auto { mtbf: Duration },
}

impl Interval {
    /// From MPCRS_CHECKPOINT_INTERVAL (seconds, or "auto") and MPCRS_MTBF
    /// (seconds), for a job on `nodes` nodes. `None`: no periodic
    /// checkpoints (unset, or a period longer than a Duration holds).
    pub(crate) fn parse(
        interval: Option<&str>,
        mtbf: Option<&str>,
        nodes: usize,
    ) -> Option<Interval> {
        let interval = interval?.trim();
        if interval == "auto" {
            let mtbf = mtbf
                .and_then(|m| m.trim().parse::<f64>().ok())
                .filter(|m| m.is_finite() && *m > 0.0)
                .and_then(|m| Duration::try_from_secs_f64(m).ok())
                .unwrap_or(NODE_MTBF / nodes.max(1) as u32);
            return Some(Interval::Auto { mtbf });
        }
        interval
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .map(Interval::Every)
    }

    /// The time until the next checkpoint, given the cost of the last one
    /// (`None`: none measured yet).
    pub(crate) fn next(&self, cost: Option<Duration>) -> Duration {
        match *self {
            Interval::Every(d) => d,
            Interval::Auto { mtbf } => match cost {
                None => (mtbf / 10).min(FIRST_AT_MOST),
                Some(c) => daly(c, mtbf).max(c.saturating_mul(100)),
            },
        }
    }
}

/// Daly's optimum checkpoint interval for cost `c` and MTBF `m`:
/// sqrt(2cm) [1 + sqrt(c/2m)/3 + c/(18m)] - c while c < 2m, else m.
pub(crate) fn daly(c: Duration, m: Duration) -> Duration {
    let (c, m) = (c.as_secs_f64(), m.as_secs_f64());
    if c >= 2.0 * m {
        return Duration::from_secs_f64(m);
    }
    let t = (2.0 * c * m).sqrt() * (1.0 + (c / (2.0 * m)).sqrt() / 3.0 + c / (18.0 * m)) - c;
    Duration::try_from_secs_f64(t.max(0.0)).unwrap_or(Duration::MAX)
}

/// The cost of this process's last checkpoint, in nanoseconds (0: none yet).
static LAST_COST_NS: AtomicU64 = AtomicU64::new(0);

/// Records what a checkpoint cost: its stall and its image's write.
pub(crate) fn measured(stall: Duration, write: Duration) {
    let ns = (stall + write).as_nanos().min(u64::MAX as u128) as u64;
    LAST_COST_NS.store(ns.max(1), Ordering::Relaxed);
}

/// The cost of the last checkpoint, if one was measured.
pub(crate) fn last_cost() -> Option<Duration> {
    match LAST_COST_NS.load(Ordering::Relaxed) {
        0 => None,
        ns => Some(Duration::from_nanos(ns)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> Duration {
        Duration::from_secs_f64(x)
    }

    #[test]
    fn daly_is_youngs_square_root_with_higher_order_terms() {
        // Young: sqrt(2 * 10 s * 86400 s) = 1314.5 s; Daly adds a little.
        let t = daly(s(10.0), s(86400.0)).as_secs_f64();
        let young = (2.0f64 * 10.0 * 86400.0).sqrt();
        assert!(t > young - 10.0 && t < young + 10.0, "{t} vs {young}");
        // A cost beyond twice the MTBF: checkpoint every MTBF.
        assert_eq!(daly(s(30.0), s(10.0)), s(10.0));
        // Grows as the square root of the cost.
        let (a, b) = (daly(s(1.0), s(1e6)), daly(s(4.0), s(1e6)));
        let ratio = b.as_secs_f64() / a.as_secs_f64();
        assert!((ratio - 2.0).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn auto_keeps_checkpoints_within_one_percent_and_starts_early() {
        let auto = Interval::Auto { mtbf: s(20.0) };
        // Nothing measured: a tenth of the MTBF, at most a minute.
        assert_eq!(auto.next(None), s(2.0));
        assert_eq!(Interval::Auto { mtbf: s(1e6) }.next(None), s(60.0));
        // Cheap checkpoints: 100 times their cost is above Daly's 0.63 s.
        assert_eq!(auto.next(Some(s(0.01))), s(1.0));
        // Daly's optimum when it is the longer: a long MTBF.
        let long = Interval::Auto { mtbf: s(1e6) }.next(Some(s(0.01)));
        assert!(long > s(100.0), "{long:?}");
        // A costlier image, a longer interval.
        assert!(auto.next(Some(s(0.3))) > auto.next(Some(s(0.01))));
        assert_eq!(Interval::Every(s(7.0)).next(Some(s(1.0))), s(7.0));
    }

    #[test]
    fn the_variables_parse_and_the_default_mtbf_divides_by_the_nodes() {
        assert_eq!(Interval::parse(None, None, 1), None);
        assert_eq!(
            Interval::parse(Some("2.5"), None, 1),
            Some(Interval::Every(s(2.5)))
        );
        assert_eq!(Interval::parse(Some("1e300"), None, 1), None);
        assert_eq!(Interval::parse(Some("-1"), None, 1), None);
        assert_eq!(
            Interval::parse(Some("auto"), Some("30"), 4),
            Some(Interval::Auto { mtbf: s(30.0) })
        );
        assert_eq!(
            Interval::parse(Some("auto"), None, 4),
            Some(Interval::Auto {
                mtbf: NODE_MTBF / 4
            })
        );
    }
}
