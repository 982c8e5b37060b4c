//! Idle policy: a worker with nothing to run spins for a short, bounded time, then
//! sleeps in the kernel on a futex until another thread hands it work or its next
//! timer is due.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use crate::bell::{Bell, Woke};

const AWAKE: u32 = 0;
const SLEEPING: u32 = 1;

/// One per worker: the futex word other threads use to wake it.
#[derive(Default)]
pub(crate) struct Sleeper {
    state: AtomicU32,
}

impl Sleeper {
    /// Sleeps unless `has_work` says otherwise once the sleeping flag is visible.
    /// Returns early on a wake-up, a ring of one of `bells`, a timeout or a
    /// spurious futex return.
    pub(crate) fn sleep(
        &self,
        timeout: Option<Duration>,
        bells: &[Bell],
        has_work: impl Fn() -> bool,
    ) -> Option<Woke> {
        self.state.store(SLEEPING, Ordering::SeqCst);
        // Pairs with the fence in `wake`: either the waker sees SLEEPING, or we see
        // the work it published before calling `wake`.
        fence(Ordering::SeqCst);
        let woke = if has_work() {
            None
        } else {
            Some(crate::bell::wait(&self.state, SLEEPING, bells, timeout))
        };
        self.state.store(AWAKE, Ordering::SeqCst);
        woke
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
///
/// Where the hooks ring bells for everything they wait for (one node's
/// processes over shared memory) and other processes share the worker's
/// CPUs, the worker sleeps on the bells as soon as it is idle: a sleeper
/// gives its CPU to whoever has work, a yielder only for a turn.
pub(crate) const PROGRESS_POLL: Duration = Duration::from_millis(50);

/// How the workers' sleeps on bells ended, for `--net-stats`: counted by all
/// workers of the process, with relaxed atomics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SleepCounts {
    /// Sleeps with at least one bell armed.
    pub sleeps: u64,
    /// Ended by a bell.
    pub rung: u64,
    /// Ended by the timeout (a timer, or the cap that polls drivers without
    /// bells).
    pub timed_out: u64,
    /// Of those, how many were followed by a poll that found something: a
    /// frame without a bell (signaling), or a ring missed (see `bell`).
    pub timed_out_then_moved: u64,
}

static SLEEPS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

pub(crate) enum Count {
    Sleep = 0,
    Rung = 1,
    TimedOut = 2,
    TimedOutThenMoved = 3,
}

pub(crate) fn count(what: Count) {
    SLEEPS[what as usize].fetch_add(1, Ordering::Relaxed);
}

/// The counts of this process's workers' sleeps on bells so far.
pub fn sleep_counts() -> SleepCounts {
    let get = |i: usize| SLEEPS[i].load(Ordering::Relaxed);
    SleepCounts {
        sleeps: get(0),
        rung: get(1),
        timed_out: get(2),
        timed_out_then_moved: get(3),
    }
}
