//! Message matching for one rank of one communicator: the posted-receive queue and
//! the unexpected-message queue, searched in order so MPI's non-overtaking rule holds
//! for every (source, tag) pair, ANY_SOURCE and ANY_TAG included.
//!
//! The lock is a std mutex held only for queue operations: never across a copy of a
//! large payload and never across a ULT switch.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use mpcrs_scheduler::sync::WaitList;

use crate::consts::{ANY_SOURCE, ANY_TAG};
use crate::request::Completion;

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
}

impl Payload {
    pub(crate) fn len(&self) -> usize {
        match self {
            Payload::Eager(v) => v.len(),
            Payload::InPlace { len, .. } => *len,
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

#[derive(Default)]
pub(crate) struct Queues {
    pub(crate) posted: VecDeque<PostedRecv>,
    pub(crate) unexpected: VecDeque<Unexpected>,
}

/// Matching state of one rank in one communicator. Padded to its own cache lines:
/// neighbouring ranks' mailboxes are hit by different workers.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Mailbox {
    queues: Mutex<Queues>,
    /// Blocked probes, woken whenever a message lands in `unexpected`.
    pub(crate) arrivals: WaitList,
}

#[inline]
pub(crate) fn matches(want_source: i32, want_tag: i32, source: i32, tag: i32) -> bool {
    (want_source == ANY_SOURCE || want_source == source) && (want_tag == ANY_TAG || want_tag == tag)
}

impl Mailbox {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Queues> {
        // A rank that panicked while holding the lock ends the job; the data is fine.
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
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
