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
struct P(*mut c_void);
// SAFETY: see the type's doc; the helper runs on the same worker as its rank.
unsafe impl Send for P {}

use crate::coll::{
    PMPI_Allgather, PMPI_Allreduce, PMPI_Alltoall, PMPI_Barrier, PMPI_Bcast, PMPI_Gather,
    PMPI_Reduce, PMPI_Scatter,
};

/// Starts `run` (a blocking collective returning an MPI code) in a helper ULT and
/// returns its request.
fn launch(
    call: &'static str,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    run: impl FnOnce() -> c_int + Send + 'static,
) -> c_int {
    let c = tri!(comm_for(call, comm));
    let (req, completer) = raw::manual_request();
    raw::spawn_as_rank(move || {
        let rc = run();
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
