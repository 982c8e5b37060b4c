//! Timers: each worker keeps a heap of the deadlines of its own ULTs and wakes them
//! when due; the earliest deadline bounds the worker's sleep.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::task::Task;

pub(crate) struct TimerEntry {
    pub(crate) deadline: Instant,
    pub(crate) task: Arc<Task>,
}

impl PartialEq for TimerEntry {
    fn eq(&self, other: &Self) -> bool {
        self.deadline == other.deadline
    }
}
impl Eq for TimerEntry {}
impl PartialOrd for TimerEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for TimerEntry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest deadline on top.
    fn cmp(&self, other: &Self) -> Ordering {
        other.deadline.cmp(&self.deadline)
    }
}

#[derive(Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<TimerEntry>,
}

impl Timers {
    pub(crate) fn add(&mut self, deadline: Instant, task: Arc<Task>) {
        self.heap.push(TimerEntry { deadline, task });
    }

    /// Removes and returns the tasks whose deadline has passed.
    pub(crate) fn expired(&mut self, now: Instant) -> Vec<Arc<Task>> {
        let mut due = Vec::new();
        while self.heap.peek().is_some_and(|e| e.deadline <= now) {
            due.push(self.heap.pop().unwrap().task);
        }
        due
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.heap.peek().map(|e| e.deadline)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// Suspends the caller for at least `duration`: a ULT parks (its worker runs other
/// ULTs meanwhile), a plain thread sleeps.
pub fn sleep(duration: Duration) {
    if !crate::in_ult() {
        std::thread::sleep(duration);
        return;
    }
    let deadline = Instant::now() + duration;
    while Instant::now() < deadline {
        crate::park_timeout(deadline - Instant::now());
    }
}
