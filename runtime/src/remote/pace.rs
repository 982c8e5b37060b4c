//! How often progress rounds read the sockets when the rails include shared
//! memory. Reading them is a system call (epoll), which costs more than a whole
//! round of the shared-memory rings: while sockets carry traffic they are read
//! every [`BUSY_ROUNDS`] rounds; once they have been quiet for a while, every
//! [`QUIET_ROUNDS`] rounds or [`QUIET_INTERVAL`], whichever comes first.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Rounds per read while the sockets carry traffic.
const BUSY_ROUNDS: u64 = 16;
/// Reads in a row that found nothing before the sockets count as quiet.
const QUIET_AFTER: u32 = 64;
/// Rounds, and time, per read of quiet sockets.
const QUIET_ROUNDS: u64 = 256;
const QUIET_INTERVAL: Duration = Duration::from_micros(20);
/// Rounds per look at the clock while the sockets are quiet.
const CLOCK_ROUNDS: u64 = 4 * BUSY_ROUNDS;

/// Counters of the progress rounds (plain loads and stores: two workers
/// counting at once lose a count, which only shifts the next read).
pub(crate) struct SocketPace {
    rounds: AtomicU64,
    /// Reads in a row that found nothing.
    quiet: AtomicU32,
    /// When the sockets were last read, in nanoseconds since `epoch`.
    last: AtomicU64,
    epoch: Instant,
}

impl Default for SocketPace {
    fn default() -> Self {
        SocketPace {
            rounds: AtomicU64::new(0),
            quiet: AtomicU32::new(0),
            last: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }
}

impl SocketPace {
    /// Whether this round reads the sockets.
    pub(crate) fn due(&self) -> bool {
        let round = self.rounds.load(Ordering::Relaxed);
        self.rounds.store(round.wrapping_add(1), Ordering::Relaxed);
        if !round.is_multiple_of(BUSY_ROUNDS) {
            return false;
        }
        // Quiet: the clock (20-50 ns) is looked at every few busy-pace rounds.
        self.quiet.load(Ordering::Relaxed) < QUIET_AFTER
            || round.is_multiple_of(QUIET_ROUNDS)
            || (round.is_multiple_of(CLOCK_ROUNDS)
                && self.now()
                    >= self.last.load(Ordering::Relaxed) + QUIET_INTERVAL.as_nanos() as u64)
    }

    /// Records a read of the sockets and whether it found anything.
    pub(crate) fn read(&self, moved: bool) {
        let quiet = if moved {
            0
        } else {
            self.quiet.load(Ordering::Relaxed).saturating_add(1)
        };
        self.quiet.store(quiet, Ordering::Relaxed);
        self.last.store(self.now(), Ordering::Relaxed);
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads due among the next `rounds` rounds, recording each as `moved`.
    fn reads(pace: &SocketPace, rounds: u64, moved: bool) -> u64 {
        (0..rounds)
            .filter(|_| {
                let due = pace.due();
                if due {
                    pace.read(moved);
                }
                due
            })
            .count() as u64
    }

    #[test]
    fn busy_sockets_are_read_often_quiet_ones_seldom_until_they_carry_again() {
        let pace = SocketPace::default();
        // Busy: one read every BUSY_ROUNDS rounds.
        assert_eq!(reads(&pace, 64 * BUSY_ROUNDS, true), 64);
        // Quiet reads: QUIET_AFTER of them at the busy pace...
        assert_eq!(
            reads(&pace, QUIET_AFTER as u64 * BUSY_ROUNDS, false),
            QUIET_AFTER as u64
        );
        // ...then, rounds coming fast, one every QUIET_ROUNDS.
        let fast = reads(&pace, 16 * QUIET_ROUNDS, false);
        assert!(
            fast < 16 * QUIET_ROUNDS / BUSY_ROUNDS,
            "{fast} reads of quiet sockets"
        );
        assert!(fast >= 16, "{fast} reads: at least one per QUIET_ROUNDS");
        // Slow rounds: the interval makes a round that looks at the clock a read
        // again...
        std::thread::sleep(QUIET_INTERVAL * 2);
        assert_eq!(reads(&pace, CLOCK_ROUNDS, false), 1);
        // ...and when one finds traffic, the busy pace is back.
        std::thread::sleep(QUIET_INTERVAL * 2);
        assert!(reads(&pace, CLOCK_ROUNDS, true) >= 1);
        assert_eq!(reads(&pace, 64 * BUSY_ROUNDS, false), 64);
    }
}
