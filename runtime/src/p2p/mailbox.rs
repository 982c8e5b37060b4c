//! Message matching for one rank of one communicator: the posted-receive queue and
//! the unexpected-message queue, searched in order so MPI's non-overtaking rule holds
//! for every (source, tag) pair, ANY_SOURCE and ANY_TAG included.
//!
//! The lock is a std mutex held only for queue operations: never across a copy of a
//! large payload and never across a ULT switch.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mpcrs_scheduler::sync::{poll_until, WaitList, DEFAULT_POLL};
use mpcrs_scheduler::{current, park, Unparker};

use crate::consts::{ANY_SOURCE, ANY_TAG};
use crate::error::ErrorClass;
use crate::request::{Completion, Status};

/// A receive waiting for its message. The buffer belongs to the receiver, which
/// keeps it alive and untouched until `done` completes.
pub(crate) struct PostedRecv {
    pub(crate) source: i32,
    pub(crate) tag: i32,
    pub(crate) buf: *mut u8,
    pub(crate) capacity: usize,
    pub(crate) done: Arc<Completion>,
}

/// The data of a message nobody was waiting for yet.
pub(crate) enum Payload {
    /// Small message: copied out of the sender's buffer at send time.
    Eager(Vec<u8>),
    /// Large (or synchronous) message: still in the sender's buffer, which stays
    /// valid until `done` completes; the receiver copies it once, directly.
    InPlace {
        buf: *const u8,
        len: usize,
        done: Arc<Completion>,
    },
    /// A message from another process (crate::remote).
    Remote(crate::remote::Incoming),
}

impl Payload {
    pub(crate) fn len(&self) -> usize {
        match self {
            Payload::Eager(v) => v.len(),
            Payload::InPlace { len, .. } => *len,
            Payload::Remote(m) => m.len(),
        }
    }
}

pub(crate) struct Unexpected {
    pub(crate) source: i32,
    pub(crate) tag: i32,
    pub(crate) payload: Payload,
}

// SAFETY: the raw pointers refer to buffers their owners keep alive and untouched
// until the attached completion is set (see the field docs); the queues only move
// them between threads under the mailbox lock.
unsafe impl Send for PostedRecv {}
// SAFETY: as for `PostedRecv`.
unsafe impl Send for Unexpected {}

/// The oldest posted receive, when a blocking call posted it while nothing else was
/// pending and it is small: it lives in the mailbox itself, no allocation involved.
pub(crate) struct FastRecv {
    pub(crate) source: i32,
    pub(crate) tag: i32,
    pub(crate) buf: *mut u8,
    pub(crate) capacity: usize,
    /// Set when the receiver parked waiting for it.
    pub(crate) waiter: Option<Unparker>,
    /// Matched by a message from another process whose data is still on its way
    /// (a rendezvous): no other message may take it, and the network publishes
    /// its status with [`Mailbox::finish_fast`].
    pub(crate) matched: bool,
}

impl FastRecv {
    /// Whether a message from (source, tag) takes this receive.
    pub(crate) fn takes(&self, source: i32, tag: i32) -> bool {
        !self.matched && matches(self.source, self.tag, source, tag)
    }
}

// SAFETY: as for `PostedRecv`: the receiver keeps `buf` valid and untouched until
// the mailbox publishes the receive's status.
unsafe impl Send for FastRecv {}

#[derive(Default)]
pub(crate) struct Queues {
    /// Older than every entry of `posted` whenever present.
    pub(crate) fast: Option<FastRecv>,
    pub(crate) posted: VecDeque<PostedRecv>,
    pub(crate) unexpected: VecDeque<Unexpected>,
}

/// Matching state of one rank in one communicator. Padded to its own cache lines:
/// neighbouring ranks' mailboxes are hit by different workers. The fields of the
/// inline receive come first so that its whole hand-off fits in one cache line.
#[repr(C, align(128))]
#[derive(Default)]
pub(crate) struct Mailbox {
    /// Status of the inline receive: bytes | error class << 48 | DONE.
    fast_state: AtomicU64,
    /// Status of the inline receive: source << 32 | tag.
    fast_from: AtomicU64,
    queues: Mutex<Queues>,
    /// Blocked probes, woken whenever a message lands in `unexpected`.
    pub(crate) arrivals: WaitList,
}

/// Whether a receive for (want_source, want_tag) takes a message from (source,
/// tag). Negative tags are the runtime's own (collectives between processes):
/// only a receive naming that exact tag takes them, never MPI_ANY_TAG.
#[inline]
pub(crate) fn matches(want_source: i32, want_tag: i32, source: i32, tag: i32) -> bool {
    (want_source == ANY_SOURCE || want_source == source)
        && ((want_tag == ANY_TAG && tag >= 0) || want_tag == tag)
}

const FAST_DONE: u64 = 1 << 63;

impl Mailbox {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Queues> {
        // A rank that panicked while holding the lock ends the job; the data is fine.
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Clears the inline receive's status before the receiver posts it (under the lock).
    pub(crate) fn arm_fast(&self) {
        self.fast_state.store(0, Ordering::Relaxed);
    }

    /// Called by the sender that matched the inline receive, under the lock.
    pub(crate) fn publish_fast(&self, st: Status) {
        self.fast_from.store(
            ((st.source as u32 as u64) << 32) | st.tag as u32 as u64,
            Ordering::Relaxed,
        );
        let state = st.bytes as u64 | ((st.error as i32 as u64) << 48) | FAST_DONE;
        self.fast_state.store(state, Ordering::Release);
    }

    /// Publishes the status of the inline receive a message from another
    /// process matched earlier ([`FastRecv::matched`]) and wakes its receiver.
    pub(crate) fn finish_fast(&self, st: Status) {
        self.hand_off(self.lock(), st);
    }

    /// Ends the inline receive with status `st` (its data already in place):
    /// takes it out of `q`, publishes the status, releases the lock, then wakes
    /// the receiver if it parked.
    pub(crate) fn hand_off(&self, mut q: MutexGuard<'_, Queues>, st: Status) {
        let fast = q.fast.take().expect("an inline receive is posted");
        self.publish_fast(st);
        drop(q);
        if let Some(w) = fast.waiter {
            w.unpark();
        }
    }

    fn fast_status(&self) -> Option<Status> {
        let state = self.fast_state.load(Ordering::Acquire);
        if state & FAST_DONE == 0 {
            return None;
        }
        let from = self.fast_from.load(Ordering::Relaxed);
        let class = ((state >> 48) & 0x7fff) as i32;
        Some(Status {
            source: (from >> 32) as u32 as i32,
            tag: from as u32 as i32,
            bytes: (state & ((1 << 48) - 1)) as usize,
            error: if class == 0 {
                ErrorClass::Success
            } else {
                ErrorClass::Truncate
            },
            cancelled: false,
        })
    }

    /// Waits for the inline receive the caller posted: polls, then parks with its
    /// unparker left in the slot for the sender.
    pub(crate) fn wait_fast(&self) -> Status {
        let mut st = None;
        if poll_until(
            || {
                st = self.fast_status();
                st.is_some()
            },
            DEFAULT_POLL,
        ) {
            return st.expect("polled status");
        }
        loop {
            {
                let mut q = self.lock();
                if let Some(st) = self.fast_status() {
                    return st;
                }
                q.fast.as_mut().expect("inline receive still posted").waiter = Some(current());
            }
            park();
            if let Some(st) = self.fast_status() {
                return st;
            }
        }
    }
}

impl Queues {
    /// Removes and returns the first posted receive matching a message from
    /// (source, tag).
    pub(crate) fn take_posted(&mut self, source: i32, tag: i32) -> Option<PostedRecv> {
        let i = self
            .posted
            .iter()
            .position(|r| matches(r.source, r.tag, source, tag))?;
        self.posted.remove(i)
    }

    /// Index of the first unexpected message a receive for (source, tag) matches.
    pub(crate) fn find_unexpected(&self, source: i32, tag: i32) -> Option<usize> {
        self.unexpected
            .iter()
            .position(|m| matches(source, tag, m.source, m.tag))
    }
}
