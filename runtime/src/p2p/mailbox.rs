//! Message matching for one rank of one communicator: the posted-receive queue and
//! the unexpected-message queue, searched in order so MPI's non-overtaking rule holds
//! for every (source, tag) pair, ANY_SOURCE and ANY_TAG included.
//!
//! The lock is a std mutex held only for queue operations: never across a copy of a
//! large payload and never across a ULT switch.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
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

#[derive(Default)]
pub(crate) struct Queues {
    pub(crate) posted: VecDeque<PostedRecv>,
    pub(crate) unexpected: VecDeque<Unexpected>,
    /// The receiver of the inline receive, once it parked waiting for it.
    fast_waiter: Option<Unparker>,
}

/// Matching state of one rank in one communicator. Padded to its own cache lines:
/// neighbouring ranks' mailboxes are hit by different workers.
///
/// A blocking receive of a small message, posted while nothing else is queued,
/// waits in the mailbox itself (the inline receive): the receiver posts it
/// without the lock and without any locked instruction (its fields, then
/// `fast_state` = POSTED); a sender or the network, under the lock, claims it
/// (POSTED to CLAIMED), copies the data and publishes the status (DONE). A
/// message queued as unexpected while the receiver was posting (it read
/// `queued` as zero just before) bumps `arrived`: the receiver sees it while it
/// waits, takes its receive back (POSTED to IDLE) and matches under the lock. A
/// claimer never takes the inline receive while an older unexpected message
/// would match it, so MPI's order holds across that race. The fields of the
/// inline receive and the lock's word share the first cache line.
#[repr(C, align(128))]
#[derive(Default)]
pub(crate) struct Mailbox {
    /// IDLE, POSTED, CLAIMED, or bytes | error class << 48 | DONE.
    fast_state: AtomicU64,
    /// While posted: the receive's source << 32 | tag; once done, the message's.
    fast_pair: AtomicU64,
    fast_buf: AtomicPtr<u8>,
    fast_capacity: AtomicUsize,
    /// Entries of `posted` and `unexpected`, and the messages ever queued as
    /// unexpected: written under the lock, read without it.
    queued: AtomicUsize,
    arrived: AtomicU64,
    queues: Mutex<Queues>,
    /// Blocked probes, woken whenever a message lands in `unexpected`.
    pub(crate) arrivals: WaitList,
}

/// The mailbox's lock, held: when released, the counts read without the lock
/// are brought up to date.
pub(crate) struct Locked<'a> {
    mailbox: &'a Mailbox,
    queues: MutexGuard<'a, Queues>,
    unexpected_before: usize,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Queues;
    fn deref(&self) -> &Queues {
        &self.queues
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Queues {
        &mut self.queues
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let m = self.mailbox;
        let (posted, unexpected) = (self.queues.posted.len(), self.queues.unexpected.len());
        // Plain stores: only holders of the lock write these.
        m.queued.store(posted + unexpected, Ordering::Relaxed);
        if unexpected > self.unexpected_before {
            // After `queued`: a receiver that reads this count reads that one too.
            m.arrived
                .store(m.arrived.load(Ordering::Relaxed) + 1, Ordering::Release);
        }
    }
}

/// Whether a receive for (want_source, want_tag) takes a message from (source,
/// tag). Negative tags are the runtime's own (collectives between processes):
/// only a receive naming that exact tag takes them, never MPI_ANY_TAG.
#[inline]
pub(crate) fn matches(want_source: i32, want_tag: i32, source: i32, tag: i32) -> bool {
    (want_source == ANY_SOURCE || want_source == source)
        && ((want_tag == ANY_TAG && tag >= 0) || want_tag == tag)
}

const FAST_IDLE: u64 = 0;
const FAST_POSTED: u64 = 1;
const FAST_CLAIMED: u64 = 2;
const FAST_DONE: u64 = 1 << 63;

fn pair(source: i32, tag: i32) -> u64 {
    ((source as u32 as u64) << 32) | tag as u32 as u64
}

fn unpair(p: u64) -> (i32, i32) {
    ((p >> 32) as u32 as i32, p as u32 as i32)
}

/// The inline receive a claimer took: where its data goes.
pub(crate) struct Claimed {
    pub(crate) buf: *mut u8,
    pub(crate) capacity: usize,
}

/// How a wait for the inline receive ended.
pub(crate) enum FastWait {
    Done(Status),
    /// A message was queued as unexpected meanwhile: the receive was taken back,
    /// to be matched under the lock.
    Withdrawn,
}

impl Mailbox {
    pub(crate) fn lock(&self) -> Locked<'_> {
        // A rank that panicked while holding the lock ends the job; the data is fine.
        let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let unexpected_before = queues.unexpected.len();
        Locked {
            mailbox: self,
            queues,
            unexpected_before,
        }
    }

    /// Messages queued as unexpected so far, if nothing is queued now: the
    /// receiver may then post its inline receive without the lock.
    pub(crate) fn nothing_queued(&self) -> Option<u64> {
        let arrived = self.arrived.load(Ordering::Acquire);
        (self.queued.load(Ordering::Relaxed) == 0).then_some(arrived)
    }

    /// Messages queued as unexpected so far, read under the lock `_q`.
    pub(crate) fn arrived(&self, _q: &Locked<'_>) -> u64 {
        self.arrived.load(Ordering::Relaxed)
    }

    /// Posts the inline receive (by its receiver only, with nothing of its own
    /// posted or pending in it).
    pub(crate) fn post_fast(&self, source: i32, tag: i32, buf: *mut u8, capacity: usize) {
        self.fast_pair.store(pair(source, tag), Ordering::Relaxed);
        self.fast_buf.store(buf, Ordering::Relaxed);
        self.fast_capacity.store(capacity, Ordering::Relaxed);
        self.fast_state.store(FAST_POSTED, Ordering::Release);
    }

    /// Takes the inline receive for a message from (source, tag), if it is
    /// posted, matches, and no older unexpected message would match it. Under
    /// the lock: the claimer then delivers and calls [`Mailbox::hand_off`] or,
    /// for data still on its way, [`Mailbox::finish_fast`].
    pub(crate) fn claim_fast(&self, q: &Locked<'_>, source: i32, tag: i32) -> Option<Claimed> {
        if self.fast_state.load(Ordering::Acquire) != FAST_POSTED {
            return None;
        }
        let (want_source, want_tag) = unpair(self.fast_pair.load(Ordering::Relaxed));
        if !matches(want_source, want_tag, source, tag)
            || q.find_unexpected(want_source, want_tag).is_some()
        {
            return None;
        }
        self.fast_state
            .compare_exchange(
                FAST_POSTED,
                FAST_CLAIMED,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .ok()?;
        Some(Claimed {
            buf: self.fast_buf.load(Ordering::Relaxed),
            capacity: self.fast_capacity.load(Ordering::Relaxed),
        })
    }

    fn publish_fast(&self, st: Status) {
        self.fast_pair
            .store(pair(st.source, st.tag), Ordering::Relaxed);
        let state = st.bytes as u64 | ((st.error as i32 as u64) << 48) | FAST_DONE;
        self.fast_state.store(state, Ordering::Release);
    }

    /// Publishes the status of the inline receive a message from another
    /// process claimed earlier (its data came later) and wakes its receiver.
    pub(crate) fn finish_fast(&self, st: Status) {
        self.hand_off(self.lock(), st);
    }

    /// Ends the claimed inline receive with status `st` (its data already in
    /// place): publishes the status, releases the lock, then wakes the receiver
    /// if it parked.
    pub(crate) fn hand_off(&self, mut q: Locked<'_>, st: Status) {
        let waiter = q.fast_waiter.take();
        self.publish_fast(st);
        drop(q);
        if let Some(w) = waiter {
            w.unpark();
        }
    }

    fn fast_status(&self) -> Option<Status> {
        let state = self.fast_state.load(Ordering::Acquire);
        if state & FAST_DONE == 0 {
            return None;
        }
        let (source, tag) = unpair(self.fast_pair.load(Ordering::Relaxed));
        let class = ((state >> 48) & 0x7fff) as i32;
        Some(Status {
            source,
            tag,
            bytes: (state & ((1 << 48) - 1)) as usize,
            error: if class == 0 {
                ErrorClass::Success
            } else {
                ErrorClass::Truncate
            },
            cancelled: false,
        })
    }

    /// The status of the inline receive if it is done; `Withdrawn` if a message
    /// was queued as unexpected since `seen` and the receive was taken back in
    /// time (else `seen` moves on: it was claimed, its status comes).
    fn fast_outcome(&self, seen: &mut u64) -> Option<FastWait> {
        if let Some(st) = self.fast_status() {
            return Some(FastWait::Done(st));
        }
        let arrived = self.arrived.load(Ordering::Acquire);
        if arrived != *seen {
            *seen = arrived;
            if self
                .fast_state
                .compare_exchange(FAST_POSTED, FAST_IDLE, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return Some(FastWait::Withdrawn);
            }
        }
        None
    }

    /// Waits for the inline receive the caller posted when `seen` messages had
    /// been queued as unexpected: polls, then parks with its unparker left for
    /// the claimer.
    ///
    /// `on_park` is called once polling gave up, and what it returns is
    /// dropped on return (the mark of a long wait).
    pub(crate) fn wait_fast<M>(&self, mut seen: u64, on_park: impl FnOnce() -> M) -> FastWait {
        let mut outcome = None;
        if poll_until(
            || {
                outcome = self.fast_outcome(&mut seen);
                outcome.is_some()
            },
            DEFAULT_POLL,
        ) {
            return outcome.expect("polled outcome");
        }
        let _mark = on_park();
        loop {
            {
                let mut q = self.lock();
                if let Some(o) = self.fast_outcome(&mut seen) {
                    q.fast_waiter = None;
                    return o;
                }
                q.fast_waiter = Some(current());
            }
            park();
            if let Some(st) = self.fast_status() {
                return FastWait::Done(st);
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

    /// Takes the unexpected message `which` picks out of the queue (a send its
    /// sender cancelled); false if none is there (it matched meanwhile).
    pub(crate) fn withdraw_unexpected(&mut self, which: impl Fn(&Payload) -> bool) -> bool {
        match self.unexpected.iter().position(|m| which(&m.payload)) {
            Some(i) => self.unexpected.remove(i).is_some(),
            None => false,
        }
    }

    /// Index of the first unexpected message a receive for (source, tag) matches.
    pub(crate) fn find_unexpected(&self, source: i32, tag: i32) -> Option<usize> {
        self.unexpected
            .iter()
            .position(|m| matches(source, tag, m.source, m.tag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eager(source: i32, tag: i32, byte: u8) -> Unexpected {
        Unexpected {
            source,
            tag,
            payload: Payload::Eager(vec![byte]),
        }
    }

    #[test]
    fn a_posted_inline_receive_is_claimed_once_and_completed_by_its_claimer() {
        let m = Mailbox::default();
        let mut buf = [0u8; 8];
        let seen = m.nothing_queued().expect("nothing queued");
        m.post_fast(3, 7, buf.as_mut_ptr(), buf.len());
        let q = m.lock();
        assert!(m.claim_fast(&q, 3, 8).is_none(), "another tag");
        assert!(m.claim_fast(&q, 2, 7).is_none(), "another source");
        let c = m.claim_fast(&q, 3, 7).expect("matching message");
        assert!(m.claim_fast(&q, 3, 7).is_none(), "claimed twice");
        assert_eq!((c.buf, c.capacity), (buf.as_mut_ptr(), 8));
        m.hand_off(q, Status::received(3, 7, 12, 8));
        match m.wait_fast(seen, || ()) {
            FastWait::Done(st) => {
                assert_eq!((st.source, st.tag, st.bytes), (3, 7, 8));
                assert_eq!(st.error, ErrorClass::Truncate);
            }
            FastWait::Withdrawn => panic!("withdrawn"),
        }
        // Done is not posted: nobody claims it until the next post.
        assert!(m.claim_fast(&m.lock(), 3, 7).is_none());
    }

    /// The receiver read `queued` as zero, then a message was queued as
    /// unexpected before its post showed: a later message of the same sender
    /// must not take the receive ahead of it.
    #[test]
    fn a_message_queued_while_posting_without_the_lock_keeps_its_turn() {
        let m = Mailbox::default();
        let mut buf = [0u8; 8];
        let seen = m.nothing_queued().expect("nothing queued");
        m.lock().unexpected.push_back(eager(1, 5, 1));
        assert_eq!(m.nothing_queued(), None);
        m.post_fast(1, 5, buf.as_mut_ptr(), buf.len());
        assert!(
            m.claim_fast(&m.lock(), 1, 5).is_none(),
            "the second message overtook the first"
        );
        assert!(matches!(m.wait_fast(seen, || ()), FastWait::Withdrawn));
        // Withdrawn: not claimable any more, the caller matches under the lock.
        let mut q = m.lock();
        assert!(m.claim_fast(&q, 1, 5).is_none());
        let i = q.find_unexpected(1, 5).expect("first message");
        assert!(matches!(q.unexpected[i].payload, Payload::Eager(ref v) if v == &[1]));
        q.unexpected.remove(i);
        drop(q);
        assert_eq!(m.nothing_queued(), Some(1));
    }

    /// A queued message the inline receive does not match leaves it claimable
    /// by a later one that does; the receiver's wait is not disturbed for good.
    #[test]
    fn unrelated_unexpected_messages_do_not_block_the_inline_receive() {
        let m = Mailbox::default();
        let mut buf = [0u8; 8];
        m.lock().unexpected.push_back(eager(1, 9, 0));
        let q = m.lock();
        let mut seen = m.arrived(&q);
        m.post_fast(1, 5, buf.as_mut_ptr(), buf.len());
        drop(q);
        assert_eq!(seen, 1);
        assert!(m.fast_outcome(&mut seen).is_none(), "nothing new came");
        let q = m.lock();
        assert!(m.claim_fast(&q, 1, 5).is_some());
        m.hand_off(q, Status::received(1, 5, 1, 8));
        assert!(matches!(m.wait_fast(seen, || ()), FastWait::Done(_)));
    }
}
