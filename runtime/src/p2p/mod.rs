//! Point-to-point engine on bytes between ranks of this process: the sender or the
//! receiver that arrives second does the one copy, straight between the two user
//! buffers (small unexpected messages are staged in one eager copy).

mod from_processes;
pub(crate) mod mailbox;

use crate::waits::{waiting, Wait};
use mailbox::{Mailbox, Payload, PostedRecv, Unexpected};
use mpcrs_scheduler::sync::DEFAULT_POLL;

use crate::comm::CommShared;
pub use crate::message::EAGER_LIMIT;
pub(crate) use crate::message::{Outgoing, SendMode};
use crate::remote::Finish;
use crate::request::{Completion, Pending, Status};

/// Set once a rank may have several threads in MPI at once
/// (MPI_THREAD_MULTIPLE): the inline receive serves one blocking receiver per
/// mailbox, so blocking receives then post in the queue like any other.
static THREAD_MULTIPLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn enable_thread_multiple() {
    THREAD_MULTIPLE.store(true, std::sync::atomic::Ordering::Release);
}

/// Copies `len` bytes of a message into a receive buffer of `capacity` bytes and
/// builds the receive's status (truncation is an error of the receive only).
///
/// # Safety
/// `src` must be valid for `len` bytes and `dst` for `capacity` bytes, and the two
/// ranges must not overlap.
unsafe fn deliver(
    src: *const u8,
    len: usize,
    dst: *mut u8,
    capacity: usize,
    source: i32,
    tag: i32,
) -> Status {
    let n = len.min(capacity);
    if n > 0 {
        // SAFETY: guaranteed by the caller.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
    }
    Status::received(source, tag, len, capacity)
}

/// Starts the send of `msg` to the mailbox `to`.
///
/// # Safety
/// `msg.buf` must stay valid and unmodified for `msg.len` bytes until the
/// returned operation is finished.
pub(crate) unsafe fn send(to: &Mailbox, msg: Outgoing) -> Pending {
    let Outgoing {
        source,
        tag,
        buf,
        len,
        mode,
    } = msg;
    let mut q = to.lock();
    if let Some(fast) = to.claim_fast(&q, source, tag) {
        // Small by construction (inline receives hold at most EAGER_LIMIT bytes):
        // copied under the lock, so the receiver's whole hand-off stays in the
        // mailbox's cache line.
        // SAFETY: the receiver keeps its buffer valid until the status is published.
        let st = unsafe { deliver(buf, len, fast.buf, fast.capacity, source, tag) };
        to.hand_off(q, st);
        return Pending::Done(Status::empty());
    }
    if let Some(recv) = q.take_posted(source, tag) {
        drop(q);
        let n = len.min(recv.capacity);
        // SAFETY: the receive's buffer is valid for `capacity` until its completion is
        // set (PostedRecv contract); ours is valid by this function's contract.
        unsafe { recv.done.copy_shared(buf, recv.buf, n) };
        recv.done
            .complete(Status::received(source, tag, len, recv.capacity));
        return Pending::Done(Status::empty());
    }
    if len <= EAGER_LIMIT && mode == SendMode::Standard {
        // SAFETY: `buf` is valid for `len` bytes by contract.
        let data = unsafe { std::slice::from_raw_parts(buf, len) }.to_vec();
        q.unexpected.push_back(Unexpected {
            source,
            tag,
            payload: Payload::Eager(data),
        });
        drop(q);
        to.arrivals.notify_all();
        return Pending::Done(Status::empty());
    }
    let done = Completion::new();
    q.unexpected.push_back(Unexpected {
        source,
        tag,
        payload: Payload::InPlace {
            buf,
            len,
            done: done.clone(),
        },
    });
    drop(q);
    to.arrivals.notify_all();
    Pending::Waiting(done)
}

/// Starts the send of `msg` to rank `dest` of `comm`, in this process or another.
///
/// # Safety
/// As [`send`].
pub(crate) unsafe fn send_to(comm: &CommShared, dest: usize, msg: Outgoing) -> Pending {
    match comm.remote_process(dest) {
        // SAFETY: forwarded from this function's contract.
        Some(to) => unsafe {
            crate::remote::Fabric::expect().send(to, comm.context, dest as i32, msg)
        },
        // SAFETY: forwarded from this function's contract.
        None => unsafe { send(&comm.mailboxes[dest], msg) },
    }
}

/// Takes a message out of the unexpected queue into a receive buffer; a
/// rendezvous from another process may finish later.
///
/// # Safety
/// `buf` must be valid for `capacity` bytes until the operation finishes.
unsafe fn consume(msg: Unexpected, buf: *mut u8, capacity: usize) -> Pending {
    let st = match msg.payload {
        // SAFETY: the vector holds `v.len()` bytes; `buf` is valid by contract.
        Payload::Eager(v) => unsafe {
            deliver(v.as_ptr(), v.len(), buf, capacity, msg.source, msg.tag)
        },
        Payload::Remote(incoming) => {
            let done = Completion::new();
            let fabric = crate::remote::Fabric::expect();
            // SAFETY: forwarded from this function's contract.
            unsafe { fabric.receive(incoming, buf, capacity, Finish::Request(done.clone())) };
            fabric.flush_deferred();
            return if done.is_done() {
                Pending::Done(done.status())
            } else {
                Pending::Waiting(done)
            };
        }
        Payload::InPlace {
            buf: src,
            len,
            done,
        } => {
            let n = len.min(capacity);
            // SAFETY: the sender keeps `src` valid until `done` is set (Payload
            // contract); `buf` is valid by this function's contract.
            unsafe { done.copy_shared(src, buf, n) };
            done.complete(Status::empty());
            Status::received(msg.source, msg.tag, len, capacity)
        }
    };
    Pending::Done(st)
}

/// Starts a receive into `capacity` bytes at `buf` from (source, tag) of the
/// mailbox `mine`, which must be the receiver's own.
///
/// # Safety
/// `buf` must stay valid for `capacity` bytes, and not be accessed by anyone else,
/// until the returned operation is finished.
pub(crate) unsafe fn recv(
    mine: &Mailbox,
    source: i32,
    tag: i32,
    buf: *mut u8,
    capacity: usize,
) -> Pending {
    let mut q = mine.lock();
    if let Some(i) = q.find_unexpected(source, tag) {
        let msg = q.unexpected.remove(i).expect("index from find_unexpected");
        drop(q);
        // SAFETY: forwarded from this function's contract.
        return unsafe { consume(msg, buf, capacity) };
    }
    let done = Completion::new();
    q.posted.push_back(PostedRecv {
        source,
        tag,
        buf,
        capacity,
        done: done.clone(),
    });
    Pending::Waiting(done)
}

/// A blocking receive. Small receives posted when nothing else is pending wait in
/// the mailbox's inline slot: posted without the lock when nothing is queued,
/// completed by the sender without allocation, the hand-off costing one round
/// trip of one cache line.
///
/// # Safety
/// `buf` valid for `capacity` bytes and not accessed by anyone else until return.
pub(crate) unsafe fn recv_blocking(
    mine: &Mailbox,
    context: u64,
    source: i32,
    tag: i32,
    buf: *mut u8,
    capacity: usize,
) -> Status {
    let waits_for = Wait::Message {
        context,
        source,
        tag,
    };
    if capacity > EAGER_LIMIT || THREAD_MULTIPLE.load(std::sync::atomic::Ordering::Relaxed) {
        // SAFETY: forwarded from this function's contract.
        let posted = unsafe { recv(mine, source, tag, buf, capacity) };
        let _waiting = waiting(waits_for);
        return posted.wait();
    }
    loop {
        let seen = match mine.nothing_queued() {
            Some(seen) => {
                mine.post_fast(source, tag, buf, capacity);
                seen
            }
            None => {
                let mut q = mine.lock();
                if !q.posted.is_empty() {
                    drop(q);
                    // SAFETY: forwarded from this function's contract.
                    return unsafe { recv(mine, source, tag, buf, capacity) }.wait();
                }
                if let Some(i) = q.find_unexpected(source, tag) {
                    let msg = q.unexpected.remove(i).expect("index from find_unexpected");
                    drop(q);
                    // SAFETY: forwarded from this function's contract.
                    return unsafe { consume(msg, buf, capacity) }.wait();
                }
                // Posted under the lock: no message slips in between.
                let seen = mine.arrived(&q);
                mine.post_fast(source, tag, buf, capacity);
                seen
            }
        };
        match mine.wait_fast(seen, || waiting(waits_for)) {
            mailbox::FastWait::Done(st) => return st,
            mailbox::FastWait::Withdrawn => continue,
        }
    }
}

/// MPI_Improbe: removes the first matching unexpected message from the caller's
/// mailbox and hands it over, to be received with [`consume_message`].
pub(crate) fn take_matching(mine: &Mailbox, source: i32, tag: i32) -> Option<Unexpected> {
    let mut q = mine.lock();
    let i = q.find_unexpected(source, tag)?;
    q.unexpected.remove(i)
}

/// MPI_Mprobe: waits for a matching message (on the communicator of
/// `context`) and takes it.
pub(crate) fn wait_matching(mine: &Mailbox, context: u64, source: i32, tag: i32) -> Unexpected {
    wait_for_arrival(mine, context, source, tag, || {
        take_matching(mine, source, tag)
    })
}

/// Waits until `look` finds what a message from (source, tag) on the
/// communicator of `context` brings, looking again at every arrival.
fn wait_for_arrival<T>(
    mine: &Mailbox,
    context: u64,
    source: i32,
    tag: i32,
    mut look: impl FnMut() -> Option<T>,
) -> T {
    let mut found = None;
    mine.arrivals.wait_until_marked(
        || {
            found = look();
            found.is_some()
        },
        DEFAULT_POLL,
        || {
            waiting(Wait::Message {
                context,
                source,
                tag,
            })
        },
    );
    found.expect("wait_until returned without a message")
}

/// Receives a message taken by [`take_matching`] into `capacity` bytes at `buf`.
///
/// # Safety
/// `buf` valid for `capacity` bytes.
pub(crate) unsafe fn consume_message(msg: Unexpected, buf: *mut u8, capacity: usize) -> Status {
    // SAFETY: forwarded.
    unsafe { consume(msg, buf, capacity) }.wait()
}

/// Cancels a posted receive that has not matched yet; false if it already matched.
pub(crate) fn cancel_recv(mine: &Mailbox, done: &std::sync::Arc<Completion>) -> bool {
    let mut q = mine.lock();
    let Some(i) = q
        .posted
        .iter()
        .position(|r| std::sync::Arc::ptr_eq(&r.done, done))
    else {
        return false;
    };
    q.posted.remove(i);
    drop(q);
    done.complete(Status::cancelled());
    true
}

/// MPI_Cancel of the send `done` to member `dest` of `comm`, if it still waits
/// for its receiver: a message of this process still unmatched in the
/// receiver's mailbox is taken back and the send completes as cancelled; one
/// in another process is asked back (see [`crate::remote::Fabric::cancel_send`]).
/// A send that matched, or whose data was staged, completes normally.
pub(crate) fn cancel_send(comm: &CommShared, dest: usize, done: &std::sync::Arc<Completion>) {
    if comm.remote_process(dest).is_some() {
        crate::remote::Fabric::expect().cancel_send(done);
        return;
    }
    let withdrawn = comm.mailboxes[dest].lock().withdraw_unexpected(
        |p| matches!(p, Payload::InPlace { done: d, .. } if std::sync::Arc::ptr_eq(d, done)),
    );
    if withdrawn {
        done.complete(Status::cancelled());
    }
}

/// MPI_Iprobe on the caller's own mailbox: the status of the first matching
/// unexpected message, left in place.
pub(crate) fn iprobe(mine: &Mailbox, source: i32, tag: i32) -> Option<Status> {
    let q = mine.lock();
    q.find_unexpected(source, tag).map(|i| {
        let m = &q.unexpected[i];
        Status::ok(m.source, m.tag, m.payload.len())
    })
}

/// MPI_Probe: waits until a matching message is there (on the communicator
/// of `context`).
pub(crate) fn probe(mine: &Mailbox, context: u64, source: i32, tag: i32) -> Status {
    wait_for_arrival(mine, context, source, tag, || iprobe(mine, source, tag))
}

mod api;
