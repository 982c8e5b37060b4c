//! Byte-level entry points for the C ABI (mpi-abi): the same engine as the typed
//! Rust API, with raw pointers and lengths in bytes, and every error passed through
//! the communicator's error handler. Not for Rust programs: the typed API checks
//! buffer sizes, these functions trust their callers.

use crate::coll;
use crate::comm::Communicator;
use crate::datatype::Kind;
use crate::error::{ErrorClass, Result};
use crate::op::Op;
use crate::p2p::{self, SendMode};
use crate::request::{self, Pending, Status};

pub use crate::coll::{Layout, Pattern};
pub use crate::rma::{Finish, Flavor, Memory, Window};

/// An operation in flight, without a borrow: the caller keeps its buffer alive
/// and untouched until the request completed (MPI's rules for MPI_Request).
pub struct RawRequest {
    pending: Pending,
    /// For a send: the member of the communicator it goes to (MPI_Cancel
    /// looks for it there).
    send_to: Option<usize>,
}

impl RawRequest {
    fn new(pending: Pending) -> RawRequest {
        RawRequest {
            pending,
            send_to: None,
        }
    }

    /// An already completed request (operations with MPI_PROC_NULL).
    pub fn completed(status: Status) -> RawRequest {
        RawRequest::new(Pending::Done(status))
    }

    /// A second handle on the same operation: both see it complete (an
    /// operation a window completes at its next synchronization, and the
    /// program through its request).
    pub fn share(&self) -> RawRequest {
        RawRequest::new(match &self.pending {
            Pending::Done(s) => Pending::Done(*s),
            Pending::Waiting(c) => Pending::Waiting(c.clone()),
        })
    }

    pub fn wait(&self) -> Status {
        match &self.pending {
            Pending::Done(s) => *s,
            Pending::Waiting(c) => c.wait(),
        }
    }

    pub fn test(&self) -> Option<Status> {
        self.pending.test()
    }

    /// MPI_Cancel of this request, made on `comm`. A receive that has not
    /// matched yet completes at once with a cancelled status (true). A send
    /// still unmatched at its receiver is withdrawn and completes as cancelled,
    /// at once in this process or when the receiving process answered; one that
    /// matched, or was staged, completes normally.
    pub fn cancel(&self, comm: &Communicator) -> bool {
        let Pending::Waiting(c) = &self.pending else {
            return false;
        };
        match self.send_to {
            Some(dest) => {
                p2p::cancel_send(&comm.shared, dest, c);
                c.is_done()
            }
            None => p2p::cancel_recv(comm.my_mailbox(), c),
        }
    }
}

/// A message taken out of matching by a matched probe (MPI_Message).
pub struct RawMessage {
    msg: crate::p2p::mailbox::Unexpected,
}

impl RawMessage {
    /// The status a receive of this message reports (before truncation).
    pub fn status(&self) -> Status {
        Status::ok(self.msg.source, self.msg.tag, self.msg.payload.len())
    }

    /// Receives the message into `capacity` bytes (MPI_Mrecv).
    ///
    /// # Safety
    /// `buf` valid for `capacity` bytes.
    pub unsafe fn receive(self, buf: *mut u8, capacity: usize) -> Status {
        // SAFETY: forwarded.
        unsafe { p2p::consume_message(self.msg, buf, capacity) }
    }
}

/// MPI_Mprobe (`blocking`) / MPI_Improbe. `Ok(None)` when nothing matches (non-blocking).
pub fn mprobe(
    comm: &Communicator,
    call: &'static str,
    source: i32,
    tag: i32,
    blocking: bool,
) -> Result<Option<RawMessage>> {
    if comm.check_peer(call, source, tag, true)? {
        // MPI_PROC_NULL: the caller reports MPI_MESSAGE_NO_PROC.
        return Ok(None);
    }
    let mine = comm.my_mailbox();
    Ok(if blocking {
        Some(RawMessage {
            msg: p2p::wait_matching(mine, comm.context_id(), source, tag),
        })
    } else {
        p2p::take_matching(mine, source, tag).map(|msg| RawMessage { msg })
    })
}

/// The completing side of a request made with [`manual_request`].
pub struct Completer(std::sync::Arc<crate::request::Completion>);

impl Completer {
    pub fn complete(self, status: Status) {
        self.0.complete(status)
    }
}

/// A request completed by hand (non-blocking collectives run by a helper ULT).
pub fn manual_request() -> (RawRequest, Completer) {
    let c = crate::request::Completion::new();
    (RawRequest::new(Pending::Waiting(c.clone())), Completer(c))
}

/// Runs `f` in a new ULT acting as the caller's rank: on the caller's worker,
/// or, for an OS thread acting for a rank (the program's own thread, or one a
/// rank started under MPI_THREAD_MULTIPLE), on a worker of the rank's
/// scheduler. Does not wait for `f` to start: what must be ordered is ordered
/// by a turn taken before (see [`reserve_turn`]).
pub fn spawn_as_rank(f: impl FnOnce() + Send + 'static) {
    let rank = crate::process::current_rank().expect("spawn_as_rank outside a rank");
    // The join handle is not needed: the helper reports through its request.
    let helper = move || {
        crate::process::set_current_rank(rank);
        f();
    };
    if mpcrs_scheduler::in_ult() {
        let _ = mpcrs_scheduler::spawn_local(helper);
    } else {
        let (handle, worker) =
            crate::run::worker_for_rank(rank).expect("a rank's scheduler runs while it calls MPI");
        let _ = handle.spawn_on(worker, helper);
    }
}

/// A place in the order of the caller's collectives on a communicator, taken
/// when a non-blocking collective is issued; the helper running it waits for
/// the place with [`in_turn`]. Every turn taken must be waited for, or the
/// communicator's later collectives of this rank never start.
pub struct Turn(u64);

/// Takes the next place in the order of this rank's collectives on `comm`.
pub fn reserve_turn(comm: &Communicator) -> Turn {
    Turn(comm.lane.reserve())
}

/// Waits for `turn` on `comm`, then runs `f` holding it: collectives `f` calls
/// on `comm` run in that place.
pub fn in_turn<R>(comm: &Communicator, turn: Turn, f: impl FnOnce() -> R) -> R {
    let _held = comm.lane.claim(turn.0);
    f()
}

/// Waits until at least one of `requests` completed; returns the indices of those
/// that did.
pub fn wait_some(requests: &[&RawRequest]) -> Vec<usize> {
    let pending: Vec<&Pending> = requests.iter().map(|r| &r.pending).collect();
    request::wait_some(&pending)
}

/// MPI_Isend / MPI_Issend of `len` bytes.
///
/// # Safety
/// `buf` valid for `len` bytes and unmodified until the request completes.
pub unsafe fn isend(
    comm: &Communicator,
    call: &'static str,
    buf: *const u8,
    len: usize,
    dest: i32,
    tag: i32,
    synchronous: bool,
) -> Result<RawRequest> {
    let mode = if synchronous {
        SendMode::Synchronous
    } else {
        SendMode::Standard
    };
    // SAFETY: forwarded from this function's contract.
    let pending = unsafe { comm.send_bytes(call, buf, len, dest, tag, mode)? };
    Ok(RawRequest {
        send_to: matches!(pending, Pending::Waiting(_)).then(|| comm.member_of_peer(dest as usize)),
        pending,
    })
}

/// MPI_Irecv into `capacity` bytes.
///
/// # Safety
/// `buf` valid for `capacity` bytes and not accessed until the request completes.
pub unsafe fn irecv(
    comm: &Communicator,
    call: &'static str,
    buf: *mut u8,
    capacity: usize,
    source: i32,
    tag: i32,
) -> Result<RawRequest> {
    // SAFETY: forwarded from this function's contract.
    Ok(RawRequest::new(unsafe {
        comm.recv_bytes(call, buf, capacity, source, tag)?
    }))
}

/// MPI_Recv (blocking, with the inline fast path).
///
/// # Safety
/// As [`irecv`], until return.
pub unsafe fn recv(
    comm: &Communicator,
    call: &'static str,
    buf: *mut u8,
    capacity: usize,
    source: i32,
    tag: i32,
) -> Result<Status> {
    if comm.check_peer(call, source, tag, true)? {
        return Ok(Status::empty());
    }
    // SAFETY: forwarded from this function's contract.
    Ok(unsafe {
        p2p::recv_blocking(
            comm.my_mailbox(),
            comm.context_id(),
            source,
            tag,
            buf,
            capacity,
        )
    })
}

/// MPI_Iprobe / MPI_Probe.
pub fn probe(
    comm: &Communicator,
    call: &'static str,
    source: i32,
    tag: i32,
    blocking: bool,
) -> Result<Option<Status>> {
    if comm.check_peer(call, source, tag, true)? {
        return Ok(Some(Status::empty()));
    }
    Ok(if blocking {
        Some(p2p::probe(
            comm.my_mailbox(),
            comm.context_id(),
            source,
            tag,
        ))
    } else {
        p2p::iprobe(comm.my_mailbox(), source, tag)
    })
}

/// The error of a status that failed (truncation), through the error handler.
pub fn status_error(comm: &Communicator, call: &'static str, st: &Status) -> Result<()> {
    if st.error == ErrorClass::Success {
        return Ok(());
    }
    comm.fail(
        call,
        st.error,
        format!(
            "message of {} bytes from rank {} (tag {}) did not fit the receive buffer",
            st.bytes, st.source, st.tag
        ),
    )
}

/// MPI_Barrier.
pub fn barrier(comm: &Communicator) {
    let _turn = comm.lane.enter();
    if comm.is_inter() {
        return coll::inter::barrier(comm);
    }
    coll::barrier(&comm.shared, comm.rank as usize)
}

/// MPI_Bcast of `len` bytes.
///
/// # Safety
/// `buf` valid for `len` bytes until return.
pub unsafe fn bcast(comm: &Communicator, buf: *mut u8, len: usize, root: i32) -> Result<()> {
    if comm.is_inter() {
        let root = comm.check_inter_root("MPI_Bcast", root)?;
        let _turn = comm.lane.enter();
        // SAFETY: forwarded.
        let t = unsafe { coll::inter::bcast(comm, root, buf, len) };
        return comm.truncated("MPI_Bcast", t);
    }
    let root = comm.check(comm.check_root("MPI_Bcast", root))?;
    let _turn = comm.lane.enter();
    // SAFETY: forwarded.
    let t = unsafe { coll::bcast(&comm.shared, comm.rank as usize, root, buf, len) };
    comm.truncated("MPI_Bcast", t)
}

/// Element description of a reduction.
#[derive(Clone, Copy, Debug)]
pub struct Elements {
    pub kind: Kind,
    /// Bytes per element.
    pub size: usize,
}

/// MPI_Reduce (`root` Some) and MPI_Allreduce (`root` None); `send == recv` for
/// MPI_IN_PLACE.
///
/// # Safety
/// `send` valid for `len` bytes; `recv` for `len` bytes where written.
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce(
    comm: &Communicator,
    call: &'static str,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    el: Elements,
    op: &Op,
    root: Option<i32>,
) -> Result<()> {
    if comm.is_inter() {
        let root = match root {
            Some(r) => Some(comm.check_inter_root(call, r)?),
            None => None,
        };
        let red = comm.reduction_of(call, op, el.kind, el.size)?;
        let _turn = comm.lane.enter();
        // SAFETY: forwarded.
        let t = unsafe { coll::inter::reduce(comm, root, send, recv, len, red) };
        return comm.truncated(call, t);
    }
    let root = match root {
        Some(r) => Some(comm.check(comm.check_root(call, r))?),
        None => None,
    };
    let red = comm.reduction_of(call, op, el.kind, el.size)?;
    let _turn = comm.lane.enter();
    // SAFETY: forwarded.
    let t = unsafe { coll::reduce(&comm.shared, comm.rank as usize, root, send, recv, len, red) };
    comm.truncated(call, t)
}

/// MPI_Reduce_scatter(_block): `counts` in bytes, one per rank.
///
/// # Safety
/// `send` valid for the sum of `counts`, `recv` for `counts[rank]` bytes.
pub unsafe fn reduce_scatter(
    comm: &Communicator,
    call: &'static str,
    send: *const u8,
    recv: *mut u8,
    counts: &[usize],
    el: Elements,
    op: &Op,
) -> Result<()> {
    let red = comm.reduction_of(call, op, el.kind, el.size)?;
    let _turn = comm.lane.enter();
    if comm.is_inter() {
        // SAFETY: forwarded.
        let t = unsafe { coll::inter::reduce_scatter(comm, send, recv, counts, red) };
        return comm.truncated(call, t);
    }
    // SAFETY: forwarded.
    let t =
        unsafe { coll::reduce_scatter(&comm.shared, comm.rank as usize, send, recv, counts, red) };
    comm.truncated(call, t)
}

/// MPI_Scan / MPI_Exscan.
///
/// # Safety
/// `send` and `recv` valid for `len` bytes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn scan(
    comm: &Communicator,
    call: &'static str,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    el: Elements,
    op: &Op,
    exclusive: bool,
) -> Result<()> {
    if comm.is_inter() {
        return comm.fail(
            call,
            ErrorClass::Comm,
            "scans are not defined on intercommunicators",
        );
    }
    let red = comm.reduction_of(call, op, el.kind, el.size)?;
    let _turn = comm.lane.enter();
    // SAFETY: forwarded.
    let t = unsafe {
        coll::scan(
            &comm.shared,
            comm.rank as usize,
            send,
            recv,
            len,
            red,
            exclusive,
        )
    };
    comm.truncated(call, t)
}

/// Gather, scatter, allgather, alltoall and their v-variants.
///
/// # Safety
/// Buffers valid for their layouts until return.
pub unsafe fn exchange(
    comm: &Communicator,
    call: &'static str,
    pattern: Pattern,
    send: *const u8,
    send_layout: Layout<'_>,
    recv: *mut u8,
    recv_layout: Layout<'_>,
) -> Result<()> {
    if comm.is_inter() {
        // The C ABI passes an intercommunicator's root (MPI_ROOT, MPI_PROC_NULL
        // or a remote rank) through the pattern's usize; it is an i32 again.
        let root = match pattern {
            Pattern::Gather { root } | Pattern::Scatter { root } => {
                comm.check_inter_root(call, root as i32)?
            }
            _ => 0,
        };
        let _turn = comm.lane.enter();
        // SAFETY: forwarded.
        let t = unsafe {
            coll::inter::exchange(comm, pattern, root, send, send_layout, recv, recv_layout)
        };
        return comm.truncated(call, t);
    }
    let pattern = match pattern {
        Pattern::Gather { root } => Pattern::Gather {
            root: comm.check(comm.check_root(call, root as i32))?,
        },
        Pattern::Scatter { root } => Pattern::Scatter {
            root: comm.check(comm.check_root(call, root as i32))?,
        },
        p => p,
    };
    let _turn = comm.lane.enter();
    // SAFETY: forwarded.
    let t = unsafe {
        coll::exchange(
            &comm.shared,
            comm.rank as usize,
            pattern,
            send,
            send_layout,
            recv,
            recv_layout,
        )
    };
    comm.truncated(call, t)
}

/// MPI_Intercomm_create: collective over `local`; `peer` and `remote_leader`
/// matter at the local leader only.
pub fn intercomm_create(
    local: &Communicator,
    local_leader: i32,
    peer: Option<&Communicator>,
    remote_leader: i32,
    tag: i32,
) -> Result<Communicator> {
    let r = local.intercomm_create(local_leader, peer, remote_leader, tag);
    local.check(r)
}

/// MPI_Intercomm_merge.
pub fn intercomm_merge(inter: &Communicator, high: bool) -> Result<Communicator> {
    let r = inter.intercomm_merge(high);
    inter.check(r)
}

/// MPI_Init_thread with MPI_THREAD_MULTIPLE: a rank's own threads may call MPI
/// at once from now on (in every rank of this process).
pub fn enable_thread_multiple() {
    p2p::enable_thread_multiple();
}

/// Whether the caller runs as a ULT of the scheduler (not an OS thread of the program).
pub fn in_ult() -> bool {
    mpcrs_scheduler::in_ult()
}

/// The rank the caller acts for (its ULT's, or its OS thread's), if any.
pub fn acting_rank() -> Option<i32> {
    crate::process::current_rank()
}

/// Makes the calling OS thread act for `rank` (a thread a rank started:
/// MPI_THREAD_MULTIPLE). Not for ULTs, which carry their rank already.
pub fn act_as_rank(rank: i32) {
    crate::process::set_current_rank(rank);
}
