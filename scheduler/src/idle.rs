//! Idle policy: a worker with nothing to run spins for a short, bounded time, then
//! sleeps in the kernel on a futex until another thread hands it work or its next
//! timer is due.

use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::time::Duration;

const AWAKE: u32 = 0;
const SLEEPING: u32 = 1;

/// One per worker: the futex word other threads use to wake it.
#[derive(Default)]
pub(crate) struct Sleeper {
    state: AtomicU32,
}

impl Sleeper {
    /// Sleeps unless `has_work` says otherwise once the sleeping flag is visible.
    /// Returns early on a wake-up, a timeout or a spurious futex return.
    pub(crate) fn sleep(&self, timeout: Option<Duration>, has_work: impl Fn() -> bool) {
        self.state.store(SLEEPING, Ordering::SeqCst);
        // Pairs with the fence in `wake`: either the waker sees SLEEPING, or we see
        // the work it published before calling `wake`.
        fence(Ordering::SeqCst);
        if !has_work() {
            crate::futex::wait(&self.state, SLEEPING, timeout);
        }
        self.state.store(AWAKE, Ordering::SeqCst);
    }

    /// Called after publishing work for this worker.
    pub(crate) fn wake(&self) {
        fence(Ordering::SeqCst);
        if self.state.load(Ordering::SeqCst) == SLEEPING
            && self.state.swap(AWAKE, Ordering::SeqCst) == SLEEPING
        {
            crate::futex::wake_one(&self.state);
        }
    }
}

/// How long an idle worker spins before sleeping.
pub(crate) const DEFAULT_IDLE_SPIN: Duration = Duration::from_micros(50);

/// With progress hooks (a network), how long an idle worker keeps polling them,
/// yielding its core between rounds, before it sleeps: messages from other
/// processes wake no one, so a sleeping worker sees them only when its sleep
/// (at most a millisecond) ends. Yielding keeps oversubscribed nodes moving.
/// Once past it, the worker naps and polls until work comes, without yielding
/// again: workers that yielded whenever idle kept both CPUs of a 2-CPU virtual
/// machine busy, and its kernel threads (writeback, RCU) waited up to minutes
/// for them, so an fsync of the checkpoint's helpers did too.
pub(crate) const PROGRESS_POLL: Duration = Duration::from_millis(50);
