//! Completion state shared by an operation in flight and whoever waits for it.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mpcrs_scheduler::sync::{poll_until, WaitList, DEFAULT_POLL};

use crate::error::ErrorClass;

/// What a completed receive (or probe) reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// Rank of the sender in the communicator.
    pub source: i32,
    pub tag: i32,
    /// Bytes received.
    pub bytes: usize,
    /// `ErrorClass::Success`, or why the operation failed (e.g. truncation).
    pub error: ErrorClass,
    pub cancelled: bool,
}

impl Status {
    pub(crate) fn ok(source: i32, tag: i32, bytes: usize) -> Status {
        Status {
            source,
            tag,
            bytes,
            error: ErrorClass::Success,
            cancelled: false,
        }
    }

    /// Status of an operation with MPI_PROC_NULL, or of a completed send.
    pub fn empty() -> Status {
        Status::ok(crate::PROC_NULL, crate::ANY_TAG, 0)
    }

    /// Number of whole `T` elements received (MPI_Get_count).
    pub fn count<T>(&self) -> usize {
        self.bytes / std::mem::size_of::<T>().max(1)
    }
}

/// One operation's completion: set once by whoever finishes the operation.
pub(crate) struct Completion {
    done: AtomicBool,
    status: UnsafeCell<Status>,
    waiters: WaitList,
}

// SAFETY: `status` is written once, before `done` is set with Release, by the single
// completer; readers read it only after observing `done` with Acquire.
unsafe impl Sync for Completion {}
// SAFETY: see `Sync`.
unsafe impl Send for Completion {}

impl Completion {
    pub(crate) fn new() -> Arc<Completion> {
        Arc::new(Completion {
            done: AtomicBool::new(false),
            status: UnsafeCell::new(Status::empty()),
            waiters: WaitList::new(),
        })
    }

    pub(crate) fn complete(&self, status: Status) {
        // SAFETY: only one party completes an operation (the matcher that removed it
        // from a queue), and nobody reads `status` before `done` is set.
        unsafe { *self.status.get() = status };
        self.done.store(true, Ordering::Release);
        self.waiters.notify_all();
    }

    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// The final status; only meaningful once `is_done`.
    pub(crate) fn status(&self) -> Status {
        debug_assert!(self.is_done());
        // SAFETY: `done` was observed (Acquire), so the write happened-before.
        unsafe { *self.status.get() }
    }

    pub(crate) fn wait(&self) -> Status {
        if !self.is_done() {
            self.waiters.wait_until(|| self.is_done());
        }
        self.status()
    }

    pub(crate) fn waiters(&self) -> &WaitList {
        &self.waiters
    }
}

/// An operation that may already be finished: finished ones carry their status and
/// cost no allocation.
pub(crate) enum Pending {
    Done(Status),
    Waiting(Arc<Completion>),
}

impl Pending {
    pub(crate) fn wait(self) -> Status {
        match self {
            Pending::Done(s) => s,
            Pending::Waiting(c) => c.wait(),
        }
    }

    pub(crate) fn test(&self) -> Option<Status> {
        match self {
            Pending::Done(s) => Some(*s),
            Pending::Waiting(c) => c.is_done().then(|| c.status()),
        }
    }
}

/// Waits until at least one of `ops` is finished; returns the indices of those that
/// are. Polls first, then parks registered on every operation still in flight.
pub(crate) fn wait_some(ops: &[&Pending]) -> Vec<usize> {
    let ready = |ops: &[&Pending]| -> Vec<usize> {
        ops.iter()
            .enumerate()
            .filter(|(_, p)| p.test().is_some())
            .map(|(i, _)| i)
            .collect()
    };
    let mut found = Vec::new();
    if poll_until(
        || {
            found = ready(ops);
            !found.is_empty()
        },
        DEFAULT_POLL,
    ) {
        return found;
    }
    let me = mpcrs_scheduler::current();
    loop {
        for p in ops {
            if let Pending::Waiting(c) = p {
                c.waiters().register(&me);
            }
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        let now = ready(ops);
        if now.is_empty() {
            mpcrs_scheduler::park();
        }
        for p in ops {
            if let Pending::Waiting(c) = p {
                c.waiters().deregister(&me);
            }
        }
        let now = if now.is_empty() { ready(ops) } else { now };
        if !now.is_empty() {
            return now;
        }
    }
}
