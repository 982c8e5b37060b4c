//! ULT-aware condition variable, paired with [`super::Mutex`].

use super::{MutexGuard, WaitList};
use crate::park::{current, park};

#[derive(Default)]
pub struct Condvar {
    waiters: WaitList,
}

impl Condvar {
    pub const fn new() -> Condvar {
        Condvar {
            waiters: WaitList::new(),
        }
    }

    /// Releases the lock, waits for a notification, re-acquires the lock. Spurious
    /// wake-ups are possible: wait in a loop on the predicate.
    pub fn wait<'a, T: ?Sized>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        let mutex = guard.mutex;
        let me = current();
        // Registered before the unlock, so a notify after it is never missed.
        self.waiters.register(&me);
        drop(guard);
        park();
        self.waiters.deregister(&me);
        mutex.lock()
    }

    /// Waits until `cond` is false, as `std::sync::Condvar::wait_while`.
    pub fn wait_while<'a, T: ?Sized>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut cond: impl FnMut(&mut T) -> bool,
    ) -> MutexGuard<'a, T> {
        while cond(&mut guard) {
            guard = self.wait(guard);
        }
        guard
    }

    pub fn notify_one(&self) {
        self.waiters.notify_one();
    }

    pub fn notify_all(&self) {
        self.waiters.notify_all();
    }
}
