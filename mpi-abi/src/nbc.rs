//! Non-blocking collectives: each runs the blocking collective in a helper ULT of
//! the caller's rank on the same worker; its request completes when the helper
//! is done. The helper enters the collective before the call returns, so the
//! order of collectives on a communicator is the order the program issued them.

use std::os::raw::{c_int, c_void};

use mpcrs::raw;

use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::p2p::start;

/// A C pointer carried into the helper ULT (same process, same rank, used under
/// MPI's rule that the buffers stay untouched until the request completes).
#[derive(Clone, Copy)]
pub(crate) struct P(pub(crate) *mut c_void);
// SAFETY: see the type's doc; the helper runs on the same worker as its rank.
unsafe impl Send for P {}

use crate::coll::{
    PMPI_Allgather, PMPI_Allgatherv, PMPI_Allreduce, PMPI_Alltoall, PMPI_Alltoallv, PMPI_Alltoallw,
    PMPI_Barrier, PMPI_Bcast, PMPI_Exscan, PMPI_Gather, PMPI_Gatherv, PMPI_Reduce,
    PMPI_Reduce_scatter, PMPI_Reduce_scatter_block, PMPI_Scan, PMPI_Scatter, PMPI_Scatterv,
};

/// Copies a per-rank array argument for the helper (MPI lets the program
/// reuse nothing before completion, but a copy costs little and outlives any
/// stack array the program passed by mistake); empty where it is not
/// significant (a null pointer).
///
/// # Safety
/// `p` is null or holds `n` entries.
pub(crate) unsafe fn per_rank<T: Copy>(p: *const T, n: usize) -> Vec<T> {
    // SAFETY: by contract.
    unsafe { c_array(p, n) }.to_vec()
}

/// The size of `comm` for copying its per-rank arrays (0 if invalid: the
/// helper's call then reports the bad handle).
fn size_of(comm: MPI_Comm) -> usize {
    rank_state()
        .and_then(|st| st.comm(comm))
        .map_or(0, |c| c.size().max(0) as usize)
}

/// A pointer into an array copied for the helper, null when the copy is empty.
pub(crate) fn at<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        std::ptr::null()
    } else {
        v.as_ptr()
    }
}

/// Starts `run` (a blocking collective returning an MPI code) in a helper ULT and
/// returns its request.
pub(crate) fn launch(
    call: &'static str,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    run: impl FnOnce() -> c_int + Send + 'static,
) -> c_int {
    let c = tri!(comm_for(call, comm));
    let (req, completer) = raw::manual_request();
    // Helpers of one communicator run one after the other: a helper that
    // parked on a lock before entering its collective could otherwise be
    // overtaken by the next one, and ranks would pair different collectives.
    let (gate, opened) = raw::manual_request();
    let previous = rank_state()
        .expect("inside a rank")
        .nbc_chain
        .insert(comm, std::sync::Arc::new(gate));
    raw::spawn_as_rank(move || {
        if let Some(p) = previous {
            p.wait();
        }
        let rc = run();
        opened.complete(mpcrs::Status::empty());
        let mut st = mpcrs::Status::empty();
        if rc != MPI_SUCCESS {
            st.error = class_of_code(rc);
        }
        completer.complete(st);
    });
    start(call, c, Ok(req), None, request)
}

fn class_of_code(code: c_int) -> mpcrs::ErrorClass {
    crate::env::class_of(code).unwrap_or(mpcrs::ErrorClass::Other)
}

mpi_fn! {
    fn Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY (in the helper): the communicator handle is a plain value.
        launch("MPI_Ibarrier", comm, request, move || unsafe { PMPI_Barrier(comm) })
    }

    fn Ibcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let b = P(buffer);
        // SAFETY (in the helper): MPI keeps the buffer valid until the request completes.
        launch("MPI_Ibcast", comm, request, move || unsafe { PMPI_Bcast({ b }.0, count, datatype, root, comm) })
    }

    fn Ireduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Ireduce", comm, request, move || unsafe { PMPI_Reduce({ s }.0, { r }.0, count, datatype, op, root, comm) })
    }

    fn Iallreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Iallreduce", comm, request, move || unsafe { PMPI_Allreduce({ s }.0, { r }.0, count, datatype, op, comm) })
    }

    fn Igather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Igather", comm, request, move || unsafe {
            PMPI_Gather({ s }.0, sendcount, sendtype, { r }.0, recvcount, recvtype, root, comm)
        })
    }

    fn Iscatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Iscatter", comm, request, move || unsafe {
            PMPI_Scatter({ s }.0, sendcount, sendtype, { r }.0, recvcount, recvtype, root, comm)
        })
    }

    fn Iallgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Iallgather", comm, request, move || unsafe {
            PMPI_Allgather({ s }.0, sendcount, sendtype, { r }.0, recvcount, recvtype, comm)
        })
    }

    fn Ialltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Ialltoall", comm, request, move || unsafe {
            PMPI_Alltoall({ s }.0, sendcount, sendtype, { r }.0, recvcount, recvtype, comm)
        })
    }
}

mpi_fn! {
    fn Iscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Iscan", comm, request, move || unsafe { PMPI_Scan({ s }.0, { r }.0, count, datatype, op, comm) })
    }

    fn Iexscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Iexscan", comm, request, move || unsafe { PMPI_Exscan({ s }.0, { r }.0, count, datatype, op, comm) })
    }

    fn Ireduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ibcast.
        launch("MPI_Ireduce_scatter_block", comm, request, move || unsafe {
            PMPI_Reduce_scatter_block({ s }.0, { r }.0, recvcount, datatype, op, comm)
        })
    }

    fn Ireduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY: one count per rank.
        let counts = unsafe { per_rank(recvcounts, size_of(comm)) };
        // SAFETY (in the helper): as MPI_Ibcast; the counts are the helper's copy.
        launch("MPI_Ireduce_scatter", comm, request, move || unsafe {
            PMPI_Reduce_scatter({ s }.0, { r }.0, at(&counts), datatype, op, comm)
        })
    }

    fn Igatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let n = size_of(comm);
        // SAFETY: one entry per rank where significant (null elsewhere).
        let (rc, rd) = unsafe { (per_rank(recvcounts, n), per_rank(displs, n)) };
        // SAFETY (in the helper): as MPI_Ibcast; the arrays are the helper's copies.
        launch("MPI_Igatherv", comm, request, move || unsafe {
            PMPI_Gatherv({ s }.0, sendcount, sendtype, { r }.0, at(&rc), at(&rd), recvtype, root, comm)
        })
    }

    fn Iscatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let n = size_of(comm);
        // SAFETY: one entry per rank where significant (null elsewhere).
        let (sc, sd) = unsafe { (per_rank(sendcounts, n), per_rank(displs, n)) };
        // SAFETY (in the helper): as MPI_Igatherv.
        launch("MPI_Iscatterv", comm, request, move || unsafe {
            PMPI_Scatterv({ s }.0, at(&sc), at(&sd), sendtype, { r }.0, recvcount, recvtype, root, comm)
        })
    }

    fn Iallgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let n = size_of(comm);
        // SAFETY: one entry per rank.
        let (rc, rd) = unsafe { (per_rank(recvcounts, n), per_rank(displs, n)) };
        // SAFETY (in the helper): as MPI_Igatherv.
        launch("MPI_Iallgatherv", comm, request, move || unsafe {
            PMPI_Allgatherv({ s }.0, sendcount, sendtype, { r }.0, at(&rc), at(&rd), recvtype, comm)
        })
    }

    fn Ialltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let n = size_of(comm);
        // SAFETY: one entry per rank in each array.
        let (sc, sd, rc, rd) = unsafe { (per_rank(sendcounts, n), per_rank(sdispls, n), per_rank(recvcounts, n), per_rank(rdispls, n)) };
        // SAFETY (in the helper): as MPI_Igatherv.
        launch("MPI_Ialltoallv", comm, request, move || unsafe {
            PMPI_Alltoallv({ s }.0, at(&sc), at(&sd), sendtype, { r }.0, at(&rc), at(&rd), recvtype, comm)
        })
    }

    fn Ialltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let n = size_of(comm);
        // SAFETY: one entry per rank in each array.
        let (sc, sd, st, rc, rd, rt) = unsafe {
            (per_rank(sendcounts, n), per_rank(sdispls, n), per_rank(sendtypes, n), per_rank(recvcounts, n), per_rank(rdispls, n), per_rank(recvtypes, n))
        };
        // SAFETY (in the helper): as MPI_Igatherv.
        launch("MPI_Ialltoallw", comm, request, move || unsafe {
            PMPI_Alltoallw({ s }.0, at(&sc), at(&sd), at(&st), { r }.0, at(&rc), at(&rd), at(&rt), comm)
        })
    }

    fn Comm_idup(comm: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
        let out = P(newcomm.cast());
        // SAFETY (in the helper): MPI keeps `newcomm` valid until the request completes.
        launch("MPI_Comm_idup", comm, request, move || unsafe { crate::comm::PMPI_Comm_dup(comm, { out }.0.cast()) })
    }
}
