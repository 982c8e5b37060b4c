//! Run queues. Each worker owns a local FIFO that only it touches, plus an inbox that
//! other threads push into (new ULTs, ULTs woken from another worker). Background
//! ULTs (helpers) wait in a FIFO of their own, taken from only when the other is
//! empty or when a ULT that yielded gives them a turn.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

use crossbeam::queue::SegQueue;

use crate::task::Task;

/// Items another thread can hand to a worker.
pub(crate) type Inbox = SegQueue<Arc<Task>>;

/// The worker's own FIFOs of ready ULTs.
#[derive(Default)]
pub(crate) struct LocalQueue {
    ready: RefCell<VecDeque<Arc<Task>>>,
    background: RefCell<VecDeque<Arc<Task>>>,
}

impl LocalQueue {
    pub(crate) fn push(&self, task: Arc<Task>) {
        if task.background {
            self.background.borrow_mut().push_back(task);
        } else {
            self.ready.borrow_mut().push_back(task);
        }
    }

    /// The next ULT to run: a background one only when no other is ready, or
    /// when `background_turn` (another ULT just yielded) and one is waiting.
    pub(crate) fn pop(&self, background_turn: bool) -> Option<Arc<Task>> {
        if background_turn {
            if let Some(t) = self.background.borrow_mut().pop_front() {
                return Some(t);
            }
        }
        self.ready
            .borrow_mut()
            .pop_front()
            .or_else(|| self.background.borrow_mut().pop_front())
    }

    /// ULTs ready, background ones aside.
    pub(crate) fn len(&self) -> usize {
        self.ready.borrow().len()
    }

    /// No ULT but background ones is ready.
    pub(crate) fn is_empty(&self) -> bool {
        self.ready.borrow().is_empty()
    }

    /// Moves everything the inbox holds to the local FIFO, keeping arrival order.
    pub(crate) fn drain(&self, inbox: &Inbox) -> bool {
        let mut moved = false;
        if !inbox.is_empty() {
            while let Some(t) = inbox.pop() {
                self.push(t);
                moved = true;
            }
        }
        moved
    }
}
