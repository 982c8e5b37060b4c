//! Non-blocking collectives: each runs the blocking collective in a helper ULT
//! acting as the caller's rank; its request completes when the helper is done.
//! The call takes the collective's place in the order of the rank's collectives
//! on the communicator (a turn of its lane) before it returns, and the helper
//! runs the collective in that place: ranks enter collectives in the order the
//! program issued them, blocking and non-blocking alike. Arguments are copied
//! at the call, and the handles it names are pinned until the helper is done
//! (the program may free them right after the call). Persistent collectives
//! (pcoll.rs) run the same bodies at each MPI_Start.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use mpcrs::raw::{self, RawRequest};
use mpcrs::Communicator;

use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::p2p::start;

/// A C pointer carried into the helper ULT (same process, same rank, used under
/// MPI's rule that the buffers stay untouched until the request completes).
#[derive(Clone, Copy)]
pub(crate) struct P(pub(crate) *mut c_void);
// SAFETY: see the type's doc: the program lends the buffer to the operation
// until its request completes, and nothing else touches it meanwhile.
unsafe impl Send for P {}
// SAFETY: as for Send; the helper only reads the pointer value.
unsafe impl Sync for P {}

use crate::coll::{
    PMPI_Allgather, PMPI_Allgatherv, PMPI_Allreduce, PMPI_Alltoall, PMPI_Alltoallv, PMPI_Alltoallw,
    PMPI_Barrier, PMPI_Bcast, PMPI_Exscan, PMPI_Gather, PMPI_Gatherv, PMPI_Reduce,
    PMPI_Reduce_scatter, PMPI_Reduce_scatter_block, PMPI_Scan, PMPI_Scatter, PMPI_Scatterv,
};

/// Copies a per-rank array argument for the helper; empty where it is not
/// significant (a null pointer, or `n` 0).
///
/// # Safety
/// `p` is null or holds `n` entries.
pub(crate) unsafe fn per_rank<T: Copy>(p: *const T, n: usize) -> Vec<T> {
    // SAFETY: by contract.
    unsafe { c_array(p, n) }.to_vec()
}

/// How many entries the per-rank arrays of a collective on `comm` hold: one per
/// rank of the group the data goes to or comes from (the remote group of an
/// intercommunicator). 0 if the handle is invalid: the helper's call then
/// reports it.
fn peers_of(comm: MPI_Comm) -> usize {
    rank_state()
        .and_then(|st| st.comm(comm))
        .map_or(0, |c| c.peer_count())
}

/// Whether the caller is the root of a rooted collective on `comm` (MPI_ROOT on
/// an intercommunicator): where the root's per-rank arrays are significant.
fn is_root_of(comm: MPI_Comm, root: c_int) -> bool {
    rank_state()
        .and_then(|st| st.comm(comm))
        .is_some_and(|c| c.is_root(root))
}

/// A pointer into an array copied for the helper, null when the copy is empty.
pub(crate) fn at<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        std::ptr::null()
    } else {
        v.as_ptr()
    }
}

/// A collective as a call described it: the blocking call to run (with the
/// arguments it copied) and the handles it names.
#[derive(Clone)]
pub(crate) struct Coll {
    pub(crate) call: &'static str,
    pub(crate) comm: MPI_Comm,
    handles: Arc<[c_int]>,
    /// Runs the collective on the communicator it is given: the call's, or
    /// a persistent request's private duplicate of it (pcoll.rs).
    pub(crate) body: Arc<dyn Fn(MPI_Comm) -> c_int + Send + Sync>,
}

impl Coll {
    pub(crate) fn new(
        call: &'static str,
        comm: MPI_Comm,
        mut handles: Vec<c_int>,
        body: impl Fn(MPI_Comm) -> c_int + Send + Sync + 'static,
    ) -> Coll {
        handles.push(comm);
        Coll {
            call,
            comm,
            handles: handles.into(),
            body: Arc::new(body),
        }
    }

    /// Keeps the handles valid until [`Coll::unpin`].
    pub(crate) fn pin(&self) {
        let mut st = rank_state().expect("inside a rank");
        for &h in self.handles.iter() {
            st.pin(h);
        }
    }

    pub(crate) fn unpin(&self) {
        unpin(&self.handles);
    }

    /// Starts the collective: takes its turn on the communicator now, and runs
    /// it in a helper ULT. Returns the communicator and the request that
    /// completes with it.
    pub(crate) fn begin(&self) -> Result<(Arc<Communicator>, RawRequest), c_int> {
        let c: Arc<Communicator> = comm_for(self.call, self.comm)?.into();
        let (req, completer) = raw::manual_request();
        self.pin();
        let turn = raw::reserve_turn(&c);
        let (comm, body, pins, h) = (
            c.clone(),
            self.body.clone(),
            self.handles.clone(),
            self.comm,
        );
        raw::spawn_as_rank(move || {
            let rc = raw::in_turn(&comm, turn, || body(h));
            unpin(&pins);
            let mut st = mpcrs::Status::empty();
            if rc != MPI_SUCCESS {
                st.error = class_of_code(rc);
            }
            completer.complete(st);
        });
        Ok((c, req))
    }
}

fn unpin(handles: &[c_int]) {
    let mut st = rank_state().expect("inside a rank");
    for &h in handles {
        st.unpin(h);
    }
}

/// Starts `run` (a blocking collective on `comm` returning an MPI code, which
/// names the datatypes and ops `handles`) as a non-blocking collective and
/// returns its request in `request`.
pub(crate) fn launch(
    call: &'static str,
    comm: MPI_Comm,
    handles: Vec<c_int>,
    request: *mut MPI_Request,
    run: impl FnOnce() -> c_int + Send + 'static,
) -> c_int {
    // Run once: the body of a call that is never started again.
    let once = std::sync::Mutex::new(Some(run));
    let body = move |_: MPI_Comm| {
        let run = once.lock().unwrap().take();
        run.map_or(MPI_SUCCESS, |run| run())
    };
    launch_coll(Coll::new(call, comm, handles, body), request)
}

/// Starts `coll` and returns its request in `request`.
fn launch_coll(coll: Coll, request: *mut MPI_Request) -> c_int {
    let (c, req) = tri!(coll.begin());
    start(coll.call, c, Ok(req), None, request)
}

fn class_of_code(code: c_int) -> mpcrs::ErrorClass {
    crate::env::class_of(code).unwrap_or(mpcrs::ErrorClass::Other)
}

// The collectives as calls describe them, for the non-blocking calls below and
// the persistent ones (pcoll.rs). Each copies what the call lends only for its
// duration (per-rank arrays); the buffers stay the program's.
//
// SAFETY (of every `unsafe fn` below, and of the bodies run in the helper): the
// arguments are those of the MPI call, valid as MPI specifies; per-rank arrays
// hold one entry per rank of the peer group where significant; buffers stay
// valid and untouched until the operation's request completes.

pub(crate) fn barrier(call: &'static str, comm: MPI_Comm) -> Coll {
    // SAFETY: the communicator handle is a plain value.
    Coll::new(call, comm, vec![], move |comm: MPI_Comm| unsafe {
        PMPI_Barrier(comm)
    })
}

pub(crate) fn bcast(
    call: &'static str,
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Coll {
    let b = P(buffer);
    // SAFETY: see above.
    Coll::new(call, comm, vec![datatype], move |comm: MPI_Comm| unsafe {
        PMPI_Bcast({ b }.0, count, datatype, root, comm)
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(
    call: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    // SAFETY: see above.
    Coll::new(
        call,
        comm,
        vec![datatype, op],
        move |comm: MPI_Comm| unsafe {
            PMPI_Reduce({ s }.0, { r }.0, count, datatype, op, root, comm)
        },
    )
}

pub(crate) fn allreduce(
    call: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    // SAFETY: see above.
    Coll::new(
        call,
        comm,
        vec![datatype, op],
        move |comm: MPI_Comm| unsafe {
            PMPI_Allreduce({ s }.0, { r }.0, count, datatype, op, comm)
        },
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn scan(
    call: &'static str,
    exclusive: bool,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    // SAFETY: see above.
    Coll::new(
        call,
        comm,
        vec![datatype, op],
        move |comm: MPI_Comm| unsafe {
            if exclusive {
                PMPI_Exscan({ s }.0, { r }.0, count, datatype, op, comm)
            } else {
                PMPI_Scan({ s }.0, { r }.0, count, datatype, op, comm)
            }
        },
    )
}

pub(crate) fn reduce_scatter_block(
    call: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    // SAFETY: see above.
    Coll::new(
        call,
        comm,
        vec![datatype, op],
        move |comm: MPI_Comm| unsafe {
            PMPI_Reduce_scatter_block({ s }.0, { r }.0, recvcount, datatype, op, comm)
        },
    )
}

/// # Safety
/// See above (`recvcounts`: one count per rank of the local group, as the
/// blocking call reads it).
pub(crate) unsafe fn reduce_scatter(
    call: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    let n = rank_state()
        .and_then(|st| st.comm(comm))
        .map_or(0, |c| c.size().max(0) as usize);
    // SAFETY: by contract.
    let counts = unsafe { per_rank(recvcounts, n) };
    // SAFETY: see above; the counts are the helper's copy.
    Coll::new(
        call,
        comm,
        vec![datatype, op],
        move |comm: MPI_Comm| unsafe {
            PMPI_Reduce_scatter({ s }.0, { r }.0, at(&counts), datatype, op, comm)
        },
    )
}

/// Which uniform exchange.
#[derive(Clone, Copy)]
pub(crate) enum Uniform {
    Gather(c_int),
    Scatter(c_int),
    Allgather,
    Alltoall,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn uniform(
    call: &'static str,
    which: Uniform,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    // SAFETY: see above.
    Coll::new(
        call,
        comm,
        vec![sendtype, recvtype],
        move |comm: MPI_Comm| unsafe {
            let (s, r) = ({ s }.0, { r }.0);
            match which {
                Uniform::Gather(root) => {
                    PMPI_Gather(s, sendcount, sendtype, r, recvcount, recvtype, root, comm)
                }
                Uniform::Scatter(root) => {
                    PMPI_Scatter(s, sendcount, sendtype, r, recvcount, recvtype, root, comm)
                }
                Uniform::Allgather => {
                    PMPI_Allgather(s, sendcount, sendtype, r, recvcount, recvtype, comm)
                }
                Uniform::Alltoall => {
                    PMPI_Alltoall(s, sendcount, sendtype, r, recvcount, recvtype, comm)
                }
            }
        },
    )
}

/// Gatherv (`root` Some) and Allgatherv.
///
/// # Safety
/// See above.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gatherv(
    call: &'static str,
    root: Option<c_int>,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    // The arrays matter where data is received: everywhere, or at the root.
    let n = match root {
        Some(root) if !is_root_of(comm, root) => 0,
        _ => peers_of(comm),
    };
    // SAFETY: by contract.
    let (rc, rd) = unsafe { (per_rank(recvcounts, n), per_rank(displs, n)) };
    // SAFETY: see above; the arrays are the helper's copies.
    Coll::new(
        call,
        comm,
        vec![sendtype, recvtype],
        move |comm: MPI_Comm| unsafe {
            let (s, r) = ({ s }.0, { r }.0);
            match root {
                Some(root) => PMPI_Gatherv(
                    s,
                    sendcount,
                    sendtype,
                    r,
                    at(&rc),
                    at(&rd),
                    recvtype,
                    root,
                    comm,
                ),
                None => {
                    PMPI_Allgatherv(s, sendcount, sendtype, r, at(&rc), at(&rd), recvtype, comm)
                }
            }
        },
    )
}

/// # Safety
/// See above.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatterv(
    call: &'static str,
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    let n = if is_root_of(comm, root) {
        peers_of(comm)
    } else {
        0
    };
    // SAFETY: by contract.
    let (sc, sd) = unsafe { (per_rank(sendcounts, n), per_rank(displs, n)) };
    // SAFETY: see above; the arrays are the helper's copies.
    Coll::new(
        call,
        comm,
        vec![sendtype, recvtype],
        move |comm: MPI_Comm| unsafe {
            PMPI_Scatterv(
                { s }.0,
                at(&sc),
                at(&sd),
                sendtype,
                { r }.0,
                recvcount,
                recvtype,
                root,
                comm,
            )
        },
    )
}

/// # Safety
/// See above.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallv(
    call: &'static str,
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    let n = peers_of(comm);
    // In place, the send arrays are not significant.
    let ns = if is_in_place(sendbuf) { 0 } else { n };
    // SAFETY: by contract.
    let (sc, sd, rc, rd) = unsafe {
        (
            per_rank(sendcounts, ns),
            per_rank(sdispls, ns),
            per_rank(recvcounts, n),
            per_rank(rdispls, n),
        )
    };
    // SAFETY: see above; the arrays are the helper's copies.
    Coll::new(
        call,
        comm,
        vec![sendtype, recvtype],
        move |comm: MPI_Comm| unsafe {
            PMPI_Alltoallv(
                { s }.0,
                at(&sc),
                at(&sd),
                sendtype,
                { r }.0,
                at(&rc),
                at(&rd),
                recvtype,
                comm,
            )
        },
    )
}

/// # Safety
/// See above.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallw(
    call: &'static str,
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> Coll {
    let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
    let n = peers_of(comm);
    let ns = if is_in_place(sendbuf) { 0 } else { n };
    // SAFETY: by contract.
    let (sc, sd, st, rc, rd, rt) = unsafe {
        (
            per_rank(sendcounts, ns),
            per_rank(sdispls, ns),
            per_rank(sendtypes, ns),
            per_rank(recvcounts, n),
            per_rank(rdispls, n),
            per_rank(recvtypes, n),
        )
    };
    let handles = st.iter().chain(rt.iter()).copied().collect();
    // SAFETY: see above; the arrays are the helper's copies.
    Coll::new(call, comm, handles, move |comm: MPI_Comm| unsafe {
        PMPI_Alltoallw(
            { s }.0,
            at(&sc),
            at(&sd),
            at(&st),
            { r }.0,
            at(&rc),
            at(&rd),
            at(&rt),
            comm,
        )
    })
}

/// MPI_Comm_idup(_with_info): the new handle is written when the request
/// completes; `hints` replace the old communicator's.
fn idup(
    call: &'static str,
    comm: MPI_Comm,
    hints: Option<crate::info::Entries>,
    newcomm: *mut MPI_Comm,
) -> Coll {
    let out = P(newcomm.cast());
    // SAFETY: MPI keeps `newcomm` valid until the request completes.
    Coll::new(call, comm, vec![], move |comm: MPI_Comm| unsafe {
        let out: *mut MPI_Comm = { out }.0.cast();
        let rc = crate::comm::PMPI_Comm_dup(comm, out);
        if let (MPI_SUCCESS, Some(h)) = (rc, &hints) {
            rank_state()
                .expect("inside a rank")
                .comm_infos
                .insert(*out, h.filtered(crate::info::understood_comm_hint));
        }
        rc
    })
}

mpi_fn! {
    fn Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(barrier("MPI_Ibarrier", comm), request)
    }

    fn Ibcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(bcast("MPI_Ibcast", buffer, count, datatype, root, comm), request)
    }

    fn Ireduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm), request)
    }

    fn Iallreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(allreduce("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm), request)
    }

    fn Igather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(uniform("MPI_Igather", Uniform::Gather(root), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request)
    }

    fn Iscatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(uniform("MPI_Iscatter", Uniform::Scatter(root), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request)
    }

    fn Iallgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(uniform("MPI_Iallgather", Uniform::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request)
    }

    fn Ialltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(uniform("MPI_Ialltoall", Uniform::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request)
    }

    fn Iscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(scan("MPI_Iscan", false, sendbuf, recvbuf, count, datatype, op, comm), request)
    }

    fn Iexscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(scan("MPI_Iexscan", true, sendbuf, recvbuf, count, datatype, op, comm), request)
    }

    fn Ireduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(reduce_scatter_block("MPI_Ireduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, comm), request)
    }

    fn Ireduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        launch_coll(unsafe { reduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm) }, request)
    }

    fn Igatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        launch_coll(unsafe { gatherv("MPI_Igatherv", Some(root), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm) }, request)
    }

    fn Iscatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        launch_coll(unsafe { scatterv("MPI_Iscatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm) }, request)
    }

    fn Iallgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        launch_coll(unsafe { gatherv("MPI_Iallgatherv", None, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm) }, request)
    }

    fn Ialltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        launch_coll(unsafe { alltoallv("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm) }, request)
    }

    fn Ialltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        launch_coll(unsafe { alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm) }, request)
    }

    fn Comm_idup(comm: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
        launch_coll(idup("MPI_Comm_idup", comm, None, newcomm), request)
    }

    fn Comm_idup_with_info(comm: MPI_Comm, info: c_int, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
        // The hints are read now: the program may free the info at once.
        let Some(hints) = crate::info::info_entries(info) else {
            let c = tri!(comm_for("MPI_Comm_idup_with_info", comm));
            return fail(&c, "MPI_Comm_idup_with_info", mpcrs::ErrorClass::Info, format!("invalid info handle {info:#x}"));
        };
        launch_coll(idup("MPI_Comm_idup_with_info", comm, Some(hints), newcomm), request)
    }
}
