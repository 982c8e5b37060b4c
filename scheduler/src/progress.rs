//! Progress hooks: the network layer registers one per driver; workers poll them
//! between ULTs and while idle.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::bell::Armed;

/// The worker index hooks are polled with by a thread that is no worker (a
/// program's own thread waiting in MPI).
pub const FOREIGN_THREAD: usize = usize::MAX;

/// Something that makes communication progress when polled.
pub trait Progress: Send + Sync {
    /// Does a bounded amount of work on behalf of worker `worker`; returns true if
    /// anything happened (which keeps the worker from going to sleep).
    fn poll(&self, worker: usize) -> bool;

    /// Arms the driver's bells for one sleep of a worker (see [`crate::bell`]):
    /// `None` if it has none, or cannot arm them now.
    fn arm(&self) -> Option<Box<dyn Armed>> {
        None
    }

    /// Whether everything the driver waits for comes with a bell rung (a
    /// worker then needs no polls to see it): workers whose CPUs other
    /// processes share sleep as soon as they are idle, instead of polling
    /// and yielding first.
    fn rings_for_everything(&self) -> bool {
        false
    }
}

/// Hooks a scheduler can hold: a process has one per network plus a few drivers.
pub(crate) const MAX_HOOKS: usize = 16;

/// The registered hooks, append-only: polling them takes no lock, no allocation
/// and no reference count (it runs between every two tries of a polling wait,
/// where a lock and a cloned list cost more than an empty poll of the network).
pub(crate) struct Hooks {
    slots: [OnceLock<Arc<dyn Progress>>; MAX_HOOKS],
    /// Slots filled, published after the slot is.
    len: AtomicUsize,
    adding: Mutex<()>,
}

impl Hooks {
    pub(crate) fn new() -> Hooks {
        Hooks {
            slots: std::array::from_fn(|_| OnceLock::new()),
            len: AtomicUsize::new(0),
            adding: Mutex::new(()),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::Acquire) == 0
    }

    pub(crate) fn add(&self, hook: Arc<dyn Progress>) {
        let _one_at_a_time = self.adding.lock().unwrap();
        let n = self.len.load(Ordering::Relaxed);
        assert!(n < MAX_HOOKS, "more than {MAX_HOOKS} progress hooks");
        if self.slots[n].set(hook).is_err() {
            unreachable!("slot {n} is filled only here, under the lock");
        }
        self.len.store(n + 1, Ordering::Release);
    }

    /// Polls every hook on behalf of `worker`; true if any moved something.
    pub(crate) fn poll(&self, worker: usize) -> bool {
        let n = self.len.load(Ordering::Acquire);
        let mut any = false;
        for slot in &self.slots[..n] {
            if let Some(h) = slot.get() {
                any |= h.poll(worker);
            }
        }
        any
    }

    /// Arms every hook's bells for a sleep; appended to `out`.
    pub(crate) fn arm(&self, out: &mut Vec<Box<dyn Armed>>) {
        let n = self.len.load(Ordering::Acquire);
        out.extend(self.slots[..n].iter().filter_map(|s| s.get()?.arm()));
    }

    /// Whether every hook rings a bell for everything it waits for.
    pub(crate) fn ring_for_everything(&self) -> bool {
        let n = self.len.load(Ordering::Acquire);
        self.slots[..n]
            .iter()
            .all(|s| s.get().is_some_and(|h| h.rings_for_everything()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    struct Count(AtomicU32, bool);
    impl Progress for Count {
        fn poll(&self, _worker: usize) -> bool {
            self.0.fetch_add(1, Ordering::Relaxed);
            self.1
        }
    }

    #[test]
    fn every_hook_is_polled_and_any_progress_is_reported() {
        let hooks = Hooks::new();
        assert!(hooks.is_empty());
        assert!(!hooks.poll(0));
        let idle = Arc::new(Count(AtomicU32::new(0), false));
        let busy = Arc::new(Count(AtomicU32::new(0), true));
        hooks.add(idle.clone());
        assert!(!hooks.poll(0));
        hooks.add(busy.clone());
        assert!(hooks.poll(1));
        assert_eq!(idle.0.load(Ordering::Relaxed), 2);
        assert_eq!(busy.0.load(Ordering::Relaxed), 1);
    }
}
