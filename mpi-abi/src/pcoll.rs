//! Persistent collectives (MPI-4, MPI_Bcast_init and the like): the call
//! describes the collective once (nbc.rs copies its per-rank arrays and pins
//! its handles until the request is freed) and each MPI_Start runs it again as
//! a non-blocking collective, in its place among the rank's collectives on the
//! communicator at the time of the start. The info argument carries no hint
//! this library uses.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use mpcrs::raw::RawRequest;

use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::nbc::{self, Coll, Uniform};
use crate::requests::Persistent;

/// Makes an inactive persistent request of `coll`.
///
/// # Safety
/// `request` writable.
unsafe fn persist(coll: Coll, request: *mut MPI_Request) -> c_int {
    let c = tri!(comm_for(coll.call, coll.comm));
    coll.pin();
    let call = coll.call;
    let h = rank_state()
        .expect("inside a rank")
        .add_request(RequestEntry {
            request: RawRequest::completed(mpcrs::Status::empty()),
            comm: c.into(),
            call,
            staging: None,
            persistent: Some(Persistent::Collective(Arc::new(coll))),
            active: false,
            grequest: None,
        });
    // SAFETY: by contract.
    unsafe { *request = h };
    MPI_SUCCESS
}

mpi_fn! {
    fn Barrier_init(comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::barrier("MPI_Barrier_init", comm), request) }
    }

    fn Bcast_init(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::bcast("MPI_Bcast_init", buffer, count, datatype, root, comm), request) }
    }

    fn Reduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::reduce("MPI_Reduce_init", sendbuf, recvbuf, count, datatype, op, root, comm), request) }
    }

    fn Allreduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::allreduce("MPI_Allreduce_init", sendbuf, recvbuf, count, datatype, op, comm), request) }
    }

    fn Scan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::scan("MPI_Scan_init", false, sendbuf, recvbuf, count, datatype, op, comm), request) }
    }

    fn Exscan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::scan("MPI_Exscan_init", true, sendbuf, recvbuf, count, datatype, op, comm), request) }
    }

    fn Reduce_scatter_block_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::reduce_scatter_block("MPI_Reduce_scatter_block_init", sendbuf, recvbuf, recvcount, datatype, op, comm), request) }
    }

    fn Reduce_scatter_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::reduce_scatter("MPI_Reduce_scatter_init", sendbuf, recvbuf, recvcounts, datatype, op, comm), request) }
    }

    fn Gather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::uniform("MPI_Gather_init", Uniform::Gather(root), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request) }
    }

    fn Scatter_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::uniform("MPI_Scatter_init", Uniform::Scatter(root), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request) }
    }

    fn Allgather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::uniform("MPI_Allgather_init", Uniform::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request) }
    }

    fn Alltoall_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::uniform("MPI_Alltoall_init", Uniform::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request) }
    }

    fn Gatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::gatherv("MPI_Gatherv_init", Some(root), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), request) }
    }

    fn Allgatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::gatherv("MPI_Allgatherv_init", None, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), request) }
    }

    fn Scatterv_init(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::scatterv("MPI_Scatterv_init", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm), request) }
    }

    fn Alltoallv_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::alltoallv("MPI_Alltoallv_init", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm), request) }
    }

    fn Alltoallw_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::alltoallw("MPI_Alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm), request) }
    }
}
