//! A list of parked waiters: the building block of every blocking primitive here.

use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::park::{current, park, Unparker};

/// Waiters on some condition that a notifier makes true.
///
/// Protocol: a notifier makes its condition true (any store), then calls
/// [`notify_all`](WaitList::notify_all) or [`notify_one`](WaitList::notify_one). A
/// waiter registers before its last check of the condition, so a notification can
/// never fall between the check and the park.
#[derive(Default)]
pub struct WaitList {
    waiters: Mutex<Vec<Unparker>>,
    count: AtomicUsize,
}

impl WaitList {
    pub const fn new() -> WaitList {
        WaitList {
            waiters: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
        }
    }

    /// Returns once `cond` is true: polls for `poll` first, then parks.
    pub fn wait_until_with(&self, cond: impl FnMut() -> bool, poll: Duration) {
        self.wait_until_marked(cond, poll, || ())
    }

    /// [`wait_until_with`](WaitList::wait_until_with) that calls `on_park` once
    /// polling gave up, before it parks, and drops what it returned on return:
    /// a mark of a long wait that a wait met while polling does not pay for.
    pub fn wait_until_marked<M>(
        &self,
        mut cond: impl FnMut() -> bool,
        poll: Duration,
        on_park: impl FnOnce() -> M,
    ) {
        if crate::sync::poll_until(&mut cond, poll) {
            return;
        }
        let _mark = on_park();
        let me = current();
        loop {
            self.register(&me);
            fence(Ordering::SeqCst);
            if cond() {
                self.deregister(&me);
                return;
            }
            park();
            self.deregister(&me);
            if cond() {
                return;
            }
        }
    }

    /// [`wait_until_with`](WaitList::wait_until_with) with the default poll time.
    pub fn wait_until(&self, cond: impl FnMut() -> bool) {
        self.wait_until_with(cond, crate::sync::DEFAULT_POLL)
    }

    /// Adds `who` to the list; it will be unparked by the next notification.
    pub fn register(&self, who: &Unparker) {
        self.waiters.lock().unwrap().push(who.clone());
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// Removes `who` if a notification has not already taken it off the list.
    pub fn deregister(&self, who: &Unparker) {
        let mut w = self.waiters.lock().unwrap();
        if let Some(i) = w.iter().position(|u| u.same_as(who)) {
            w.swap_remove(i);
            self.count.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Wakes every registered waiter.
    pub fn notify_all(&self) {
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let taken = {
            let mut w = self.waiters.lock().unwrap();
            self.count.store(0, Ordering::SeqCst);
            std::mem::take(&mut *w)
        };
        for u in taken {
            u.unpark();
        }
    }

    /// Wakes one registered waiter, the longest waiting first.
    pub fn notify_one(&self) {
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let one = {
            let mut w = self.waiters.lock().unwrap();
            if w.is_empty() {
                None
            } else {
                self.count.fetch_sub(1, Ordering::SeqCst);
                Some(w.remove(0))
            }
        };
        if let Some(u) = one {
            u.unpark();
        }
    }

    /// Number of registered waiters (a snapshot).
    pub fn len(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
