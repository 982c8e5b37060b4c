//! The lock of one target (MPI_Win_lock): held shared by any number of origins
//! or exclusively by one, granted first come first served, kept by the
//! target's agent, which alone touches it.

use std::collections::{HashMap, VecDeque};

#[derive(Default)]
pub(crate) struct LockTable {
    exclusive: Option<i32>,
    /// Origins holding it shared, with how many times.
    shared: HashMap<i32, usize>,
    /// Waiting requests: (origin, exclusive, the tag its grant goes under).
    queue: VecDeque<(i32, bool, i32)>,
}

impl LockTable {
    fn compatible(&self, exclusive: bool) -> bool {
        self.exclusive.is_none() && (!exclusive || self.shared.is_empty())
    }

    fn take(&mut self, origin: i32, exclusive: bool) {
        if exclusive {
            self.exclusive = Some(origin);
        } else {
            *self.shared.entry(origin).or_default() += 1;
        }
    }

    /// A request of `origin`: true if granted now, else queued.
    pub(crate) fn request(&mut self, origin: i32, exclusive: bool, tag: i32) -> bool {
        if self.queue.is_empty() && self.compatible(exclusive) {
            self.take(origin, exclusive);
            return true;
        }
        self.queue.push_back((origin, exclusive, tag));
        false
    }

    /// `origin` releases its lock; returns the waiting requests granted now
    /// as (origin, tag). False as the second value if `origin` held none.
    pub(crate) fn release(&mut self, origin: i32) -> (Vec<(i32, i32)>, bool) {
        let held = if self.exclusive == Some(origin) {
            self.exclusive = None;
            true
        } else if let Some(n) = self.shared.get_mut(&origin) {
            *n -= 1;
            if *n == 0 {
                self.shared.remove(&origin);
            }
            true
        } else {
            false
        };
        let mut granted = Vec::new();
        while let Some(&(o, exclusive, tag)) = self.queue.front() {
            if !self.compatible(exclusive) {
                break;
            }
            self.queue.pop_front();
            self.take(o, exclusive);
            granted.push((o, tag));
        }
        (granted, held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_holders_exclude_a_writer_who_then_goes_before_later_readers() {
        let mut t = LockTable::default();
        assert!(t.request(1, false, 10));
        assert!(t.request(2, false, 11));
        assert!(!t.request(3, true, 12));
        // First come first served: a reader behind a waiting writer waits.
        assert!(!t.request(4, false, 13));
        assert_eq!(t.release(1), (vec![], true));
        assert_eq!(t.release(2), (vec![(3, 12)], true));
        assert_eq!(t.release(3), (vec![(4, 13)], true));
        assert_eq!(t.release(9), (vec![], false));
        assert_eq!(t.release(4), (vec![], true));
        assert!(t.request(5, true, 14));
    }
}
