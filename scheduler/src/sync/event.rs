//! One-shot event: set once, waited for by any number of ULTs or threads.

use std::sync::atomic::{AtomicBool, Ordering};

use super::WaitList;

#[derive(Default)]
pub struct Event {
    set: AtomicBool,
    waiters: WaitList,
}

impl Event {
    pub const fn new() -> Event {
        Event {
            set: AtomicBool::new(false),
            waiters: WaitList::new(),
        }
    }

    /// Sets the event and wakes every waiter. Idempotent.
    pub fn set(&self) {
        self.set.store(true, Ordering::SeqCst);
        self.waiters.notify_all();
    }

    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Returns once the event is set.
    pub fn wait(&self) {
        if self.is_set() {
            return;
        }
        self.waiters.wait_until(|| self.is_set());
    }

    /// The waiters, for callers that wait on several events at once (register on
    /// each, then park).
    pub fn wait_list(&self) -> &WaitList {
        &self.waiters
    }
}
