//! Bounded polling: the first phase of every blocking wait.

use std::time::{Duration, Instant};

/// How long a blocking call polls before it parks.
pub const DEFAULT_POLL: Duration = Duration::from_micros(20);

/// Polls `cond` for at most `budget`, yielding to other ready ULTs of this worker
/// between tries (spinning when there are none). Returns whether `cond` became true.
#[inline]
pub fn poll_until(mut cond: impl FnMut() -> bool, budget: Duration) -> bool {
    if cond() {
        return true;
    }
    let start = Instant::now();
    let in_ult = crate::in_ult();
    let mut tries = 0u32;
    loop {
        if in_ult && crate::has_ready_ults() {
            crate::yield_now();
        } else {
            for _ in 0..8 {
                std::hint::spin_loop();
            }
        }
        if cond() {
            return true;
        }
        tries += 1;
        // Reading the clock costs ~20 ns: do it every few tries only.
        if tries % 16 == 0 && start.elapsed() >= budget {
            return false;
        }
    }
}
