//! Completion state shared by an operation in flight and whoever waits for it.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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
    /// A receive of a `len`-byte message into `capacity` bytes: the count is
    /// what fitted, and a message that did not fit is MPI_ERR_TRUNCATE.
    pub(crate) fn received(source: i32, tag: i32, len: usize, capacity: usize) -> Status {
        let mut st = Status::ok(source, tag, len.min(capacity));
        if len > capacity {
            st.error = ErrorClass::Truncate;
        }
        st
    }

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

    /// Status of an operation MPI_Cancel withdrew.
    pub(crate) fn cancelled() -> Status {
        Status {
            cancelled: true,
            ..Status::empty()
        }
    }

    /// MPI's "empty" status, which waits and tests report for a null or
    /// inactive request: MPI_ANY_SOURCE, MPI_ANY_TAG, no data.
    pub fn inactive() -> Status {
        Status::ok(crate::ANY_SOURCE, crate::ANY_TAG, 0)
    }

    /// Number of whole `T` elements received (MPI_Get_count).
    pub fn count<T>(&self) -> usize {
        self.bytes / std::mem::size_of::<T>().max(1)
    }
}

/// One operation's completion: set once by whoever finishes the operation.
///
/// It also carries the copy of a large message while it is in flight, so that the
/// side waiting for it copies part of the chunks while the matching side copies the
/// rest: two cores move the data instead of one. Chunks are claimed from the front
/// by a ULT on an even worker and from the back by one on an odd worker, so in
/// steady exchanges each core keeps copying the same half of a buffer, which stays
/// in its cache.
pub(crate) struct Completion {
    done: AtomicBool,
    status: UnsafeCell<Status>,
    waiters: WaitList,
    copy: UnsafeCell<CopyJob>,
    /// Number of chunks of the copy in flight; 0 while there is none.
    copy_chunks: AtomicUsize,
    /// Next chunk to claim from the front (low 32 bits) and one past the next chunk
    /// to claim from the back (high 32 bits).
    copy_cursors: AtomicU64,
    copy_finished: AtomicUsize,
    /// What the operation is, for a deadlock report: 0 (not said), or the
    /// packed operation of `describe`, with its communicator's context.
    about: AtomicU64,
    about_context: AtomicU64,
}

#[derive(Clone, Copy)]
struct CopyJob {
    src: *const u8,
    dst: *mut u8,
    len: usize,
}

/// Messages at least this large are copied by both sides at once.
pub(crate) const SHARED_COPY_MIN: usize = 128 * 1024;
/// Chunk size of a shared copy: a fixed number of chunks per message, so that
/// in steady exchanges each side's share (and cache footprint) stays the same.
fn chunk_size(len: usize) -> usize {
    len.div_ceil(COPY_CHUNKS).next_multiple_of(64)
}
const COPY_CHUNKS: usize = 4;

// SAFETY: `status` is written once, before `done` is set with Release, by the single
// completer; readers read it only after observing `done` with Acquire. `copy` is
// written once by the copier before `copy_chunks` is published with Release, and
// read by helpers only after observing it with Acquire.
unsafe impl Sync for Completion {}
// SAFETY: see `Sync`.
unsafe impl Send for Completion {}

impl Completion {
    pub(crate) fn new() -> Arc<Completion> {
        Arc::new(Completion {
            done: AtomicBool::new(false),
            status: UnsafeCell::new(Status::empty()),
            waiters: WaitList::new(),
            copy: UnsafeCell::new(CopyJob {
                src: std::ptr::null(),
                dst: std::ptr::null_mut(),
                len: 0,
            }),
            copy_chunks: AtomicUsize::new(0),
            copy_cursors: AtomicU64::new(0),
            copy_finished: AtomicUsize::new(0),
            about: AtomicU64::new(0),
            about_context: AtomicU64::new(0),
        })
    }

    /// Says what the operation is (a send or a receive, its peer and tag), for
    /// a deadlock report.
    pub(crate) fn describe(&self, op: crate::waits::Operation) {
        self.about_context.store(op.context, Ordering::Relaxed);
        let packed = 1 << 63
            | (op.sending as u64) << 62
            | ((op.peer as u32 as u64) & 0x3fff_ffff) << 32
            | op.tag as u32 as u64;
        self.about.store(packed, Ordering::Relaxed);
    }

    /// What `describe` said, if it was called.
    pub(crate) fn operation(&self) -> Option<crate::waits::Operation> {
        let packed = self.about.load(Ordering::Relaxed);
        if packed >> 63 == 0 {
            return None;
        }
        // The peer's 30 bits, sign-extended (MPI_ANY_SOURCE is negative).
        let peer = (((packed >> 32) as u32) << 2) as i32 >> 2;
        Some(crate::waits::Operation {
            sending: packed >> 62 & 1 == 1,
            context: self.about_context.load(Ordering::Relaxed),
            peer,
            tag: packed as u32 as i32,
        })
    }

    /// Copies `len` bytes for the operation this completion belongs to, letting its
    /// waiter take chunks meanwhile. Returns when every byte is in place. Called at
    /// most once per completion, by the side that matched the operation.
    ///
    /// # Safety
    /// `src` and `dst` valid for `len` bytes, not overlapping, until return.
    pub(crate) unsafe fn copy_shared(&self, src: *const u8, dst: *mut u8, len: usize) {
        if len < SHARED_COPY_MIN {
            // SAFETY: forwarded to the caller.
            unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
            return;
        }
        // SAFETY: nobody reads `copy` before `copy_chunks` is published below.
        unsafe { *self.copy.get() = CopyJob { src, dst, len } };
        let chunks = len.div_ceil(chunk_size(len));
        self.copy_cursors
            .store((chunks as u64) << 32, Ordering::Relaxed);
        self.copy_chunks.store(chunks, Ordering::Release);
        self.help_copy();
        while self.copy_finished.load(Ordering::Acquire) < chunks {
            std::hint::spin_loop();
        }
    }

    /// Takes chunks of the copy in flight, if any; returns once none is left to take.
    fn help_copy(&self) {
        let chunks = self.copy_chunks.load(Ordering::Acquire);
        if chunks == 0 {
            return;
        }
        // SAFETY: published before `copy_chunks` (Release/Acquire above).
        let job = unsafe { *self.copy.get() };
        let from_back = mpcrs_scheduler::current_worker().unwrap_or(0) % 2 == 1;
        while let Some(i) = self.claim_chunk(from_back) {
            let size = chunk_size(job.len);
            let lo = i * size;
            let n = size.min(job.len - lo);
            // SAFETY: the copier keeps both buffers valid until every chunk is
            // finished, and chunk `i` is copied by whoever took index `i` only.
            unsafe { std::ptr::copy_nonoverlapping(job.src.add(lo), job.dst.add(lo), n) };
            self.copy_finished.fetch_add(1, Ordering::Release);
        }
    }

    pub(crate) fn complete(&self, status: Status) {
        // SAFETY: only one party completes an operation (the matcher that removed it
        // from a queue), and nobody reads `status` before `done` is set.
        unsafe { *self.status.get() = status };
        self.done.store(true, Ordering::Release);
        self.waiters.notify_all();
    }

    /// Claims the next chunk from the front or the back; `None` once they met.
    fn claim_chunk(&self, from_back: bool) -> Option<usize> {
        let mut cur = self.copy_cursors.load(Ordering::Relaxed);
        loop {
            let (front, back) = (cur & 0xffff_ffff, cur >> 32);
            if front >= back {
                return None;
            }
            let (next, chunk) = if from_back {
                (front | ((back - 1) << 32), back - 1)
            } else {
                ((front + 1) | (back << 32), front)
            };
            match self.copy_cursors.compare_exchange_weak(
                cur,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(chunk as usize),
                Err(actual) => cur = actual,
            }
        }
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
        let mut helped = false;
        while !self.is_done() {
            // Wake for completion, or once to help with a copy in flight; the poll
            // budget starts afresh after helping, which may take long.
            self.waiters.wait_until_marked(
                || self.is_done() || (!helped && self.copy_chunks.load(Ordering::Acquire) > 0),
                mpcrs_scheduler::sync::DEFAULT_POLL,
                || crate::waits::waiting(crate::waits::Wait::Request(self.operation())),
            );
            if !helped && !self.is_done() && self.copy_chunks.load(Ordering::Acquire) > 0 {
                self.help_copy();
                helped = true;
            }
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
    let first_unfinished = ops.iter().find_map(|p| match p {
        Pending::Waiting(c) if !c.is_done() => Some(c.operation()),
        _ => None,
    });
    let _waiting = crate::waits::waiting(crate::waits::Wait::Requests(first_unfinished.flatten()));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::waits::Operation;

    #[test]
    fn a_described_operation_reads_back_whole_with_wildcards() {
        let c = Completion::new();
        assert_eq!(c.operation(), None);
        for op in [
            Operation {
                sending: true,
                context: 7,
                peer: 65_535,
                tag: i32::MAX,
            },
            Operation {
                sending: false,
                context: 0,
                peer: crate::consts::ANY_SOURCE,
                tag: crate::consts::ANY_TAG,
            },
        ] {
            c.describe(op);
            assert_eq!(c.operation(), Some(op));
        }
    }
}
