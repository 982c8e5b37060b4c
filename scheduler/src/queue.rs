//! Run queues. Each worker owns a local FIFO that only it touches, plus an inbox that
//! other threads push into (new ULTs, ULTs woken from another worker).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

use crossbeam::queue::SegQueue;

use crate::task::Task;

/// Items another thread can hand to a worker.
pub(crate) type Inbox = SegQueue<Arc<Task>>;

/// The worker's own FIFO of ready ULTs.
#[derive(Default)]
pub(crate) struct LocalQueue {
    ready: RefCell<VecDeque<Arc<Task>>>,
}

impl LocalQueue {
    pub(crate) fn push(&self, task: Arc<Task>) {
        self.ready.borrow_mut().push_back(task);
    }

    pub(crate) fn pop(&self) -> Option<Arc<Task>> {
        self.ready.borrow_mut().pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ready.borrow().is_empty()
    }

    /// Moves everything the inbox holds to the local FIFO, keeping arrival order.
    pub(crate) fn drain(&self, inbox: &Inbox) -> bool {
        let mut moved = false;
        if !inbox.is_empty() {
            let mut ready = self.ready.borrow_mut();
            while let Some(t) = inbox.pop() {
                ready.push_back(t);
                moved = true;
            }
        }
        moved
    }
}
