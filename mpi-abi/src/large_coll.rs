//! MPI-4 large-count (`_c`) forms of the collectives: blocking, non-blocking, persistent and neighbourhood.
//! Each takes the ordinary call's path (see large_count.rs): a count that
//! fits an int is passed as it is; a larger one is carried by a datatype
//! made for the call where the call allows it, and fails with MPI_ERR_COUNT
//! naming the call where it does not. Nothing is ever truncated.

use std::os::raw::{c_int, c_void};

use crate::ctypes::{MPI_Count, MPI_Info};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::large_count as lc;

mpi_fn! {
    fn Allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Allgather_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Allgather(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm) }
    }

    fn Allgather_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Allgather_init_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Allgather_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm, info, request) }
    }

    fn Allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Allgatherv_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, peers, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Allgatherv(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, comm) }
    }

    fn Allgatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Allgatherv_init_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, peers, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Allgatherv_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, comm, info, request) }
    }

    fn Allreduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Allreduce_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Allreduce(sendbuf, recvbuf, count_.n, count_.t, op, comm) }
    }

    fn Allreduce_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Allreduce_init_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Allreduce_init(sendbuf, recvbuf, count_.n, count_.t, op, comm, info, request) }
    }

    fn Alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Alltoall_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Alltoall(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm) }
    }

    fn Alltoall_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Alltoall_init_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Alltoall_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm, info, request) }
    }

    fn Alltoallv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Alltoallv_init_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { peers }, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, if is_in_place(sendbuf) { 0 } else { peers }, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, peers, "rdispls"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Alltoallv_init(sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtype, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtype, comm, info, request) }
    }

    fn Alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Alltoallw_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { peers }, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, if is_in_place(sendbuf) { 0 } else { peers }, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, peers, "rdispls"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Alltoallw(sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtypes, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtypes, comm) }
    }

    fn Alltoallw_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Alltoallw_init_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { peers }, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, if is_in_place(sendbuf) { 0 } else { peers }, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, peers, "rdispls"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Alltoallw_init(sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtypes, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtypes, comm, info, request) }
    }

    fn Bcast_init_c(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Bcast_init_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Bcast_init(buffer, count_.n, count_.t, root, comm, info, request) }
    }

    fn Exscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Exscan_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Exscan(sendbuf, recvbuf, count_.n, count_.t, op, comm) }
    }

    fn Exscan_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Exscan_init_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Exscan_init(sendbuf, recvbuf, count_.n, count_.t, op, comm, info, request) }
    }

    fn Gather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Gather_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Gather(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, root, comm) }
    }

    fn Gather_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Gather_init_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Gather_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, root, comm, info, request) }
    }

    fn Gatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Gatherv_c";
        let c = tri!(comm_for(CALL, comm));
        let rooted = if c.is_root(root) { c.peer_count() } else { 0 };
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, rooted, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, rooted, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Gatherv(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, root, comm) }
    }

    fn Gatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Gatherv_init_c";
        let c = tri!(comm_for(CALL, comm));
        let rooted = if c.is_root(root) { c.peer_count() } else { 0 };
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, rooted, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, rooted, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Gatherv_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, root, comm, info, request) }
    }

    fn Iallgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Iallgather_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Iallgather(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm, request) }
    }

    fn Iallgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Iallgatherv_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, peers, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Iallgatherv(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, comm, request) }
    }

    fn Iallreduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Iallreduce_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Iallreduce(sendbuf, recvbuf, count_.n, count_.t, op, comm, request) }
    }

    fn Ialltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ialltoall_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ialltoall(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm, request) }
    }

    fn Ialltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ialltoallv_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { peers }, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, if is_in_place(sendbuf) { 0 } else { peers }, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, peers, "rdispls"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Ialltoallv(sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtype, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtype, comm, request) }
    }

    fn Ialltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ialltoallw_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { peers }, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, if is_in_place(sendbuf) { 0 } else { peers }, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, peers, "rdispls"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Ialltoallw(sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtypes, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtypes, comm, request) }
    }

    fn Ibcast_c(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ibcast_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ibcast(buffer, count_.n, count_.t, root, comm, request) }
    }

    fn Iexscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Iexscan_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Iexscan(sendbuf, recvbuf, count_.n, count_.t, op, comm, request) }
    }

    fn Igather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Igather_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Igather(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, root, comm, request) }
    }

    fn Igatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Igatherv_c";
        let c = tri!(comm_for(CALL, comm));
        let rooted = if c.is_root(root) { c.peer_count() } else { 0 };
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, rooted, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, rooted, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Igatherv(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, root, comm, request) }
    }

    fn Ineighbor_allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ineighbor_allgather_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ineighbor_allgather(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm, request) }
    }

    fn Ineighbor_allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ineighbor_allgatherv_c";
        let (ni, _) = crate::neighbor::degrees(comm);
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, ni, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ineighbor_allgatherv(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, comm, request) }
    }

    fn Ineighbor_alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ineighbor_alltoall_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ineighbor_alltoall(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm, request) }
    }

    fn Ineighbor_alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ineighbor_alltoallv_c";
        let (ni, no) = crate::neighbor::degrees(comm);
        let sendcounts = tri!(lc::ints(CALL, sendcounts, no, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, no, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, ni, "rdispls"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Ineighbor_alltoallv(sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtype, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtype, comm, request) }
    }

    fn Ineighbor_alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ineighbor_alltoallw_c";
        let (ni, no) = crate::neighbor::degrees(comm);
        let sendcounts = tri!(lc::ints(CALL, sendcounts, no, "sendcounts"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Ineighbor_alltoallw(sendbuf, lc::at(&sendcounts), sdispls, sendtypes, recvbuf, lc::at(&recvcounts), rdispls, recvtypes, comm, request) }
    }

    fn Ireduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ireduce_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ireduce(sendbuf, recvbuf, count_.n, count_.t, op, root, comm, request) }
    }

    fn Ireduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ireduce_scatter_block_c";
        let recvcount_ = tri!(lc::reduced(CALL, recvcount, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount_.n, recvcount_.t, op, comm, request) }
    }

    fn Ireduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ireduce_scatter_c";
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Ireduce_scatter(sendbuf, recvbuf, lc::at(&recvcounts), datatype, op, comm, request) }
    }

    fn Iscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Iscan_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Iscan(sendbuf, recvbuf, count_.n, count_.t, op, comm, request) }
    }

    fn Iscatter_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Iscatter_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Iscatter(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, root, comm, request) }
    }

    fn Iscatterv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Iscatterv_c";
        let c = tri!(comm_for(CALL, comm));
        let rooted = if c.is_root(root) { c.peer_count() } else { 0 };
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { rooted }, "sendcounts"));
        let displs = tri!(lc::ints(CALL, displs, rooted, "displs"));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Iscatterv(sendbuf, lc::at(&sendcounts), lc::at(&displs), sendtype, recvbuf, recvcount_.n, recvcount_.t, root, comm, request) }
    }

    fn Neighbor_allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Neighbor_allgather_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Neighbor_allgather(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm) }
    }

    fn Neighbor_allgather_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Neighbor_allgather_init_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Neighbor_allgather_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm, info, request) }
    }

    fn Neighbor_allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Neighbor_allgatherv_c";
        let (ni, _) = crate::neighbor::degrees(comm);
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, ni, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Neighbor_allgatherv(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, comm) }
    }

    fn Neighbor_allgatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Neighbor_allgatherv_init_c";
        let (ni, _) = crate::neighbor::degrees(comm);
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, ni, "displs"));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Neighbor_allgatherv_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, comm, info, request) }
    }

    fn Neighbor_alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Neighbor_alltoall_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Neighbor_alltoall(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm) }
    }

    fn Neighbor_alltoall_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Neighbor_alltoall_init_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Neighbor_alltoall_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm, info, request) }
    }

    fn Neighbor_alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Neighbor_alltoallv_c";
        let (ni, no) = crate::neighbor::degrees(comm);
        let sendcounts = tri!(lc::ints(CALL, sendcounts, no, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, no, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, ni, "rdispls"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Neighbor_alltoallv(sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtype, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtype, comm) }
    }

    fn Neighbor_alltoallv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Neighbor_alltoallv_init_c";
        let (ni, no) = crate::neighbor::degrees(comm);
        let sendcounts = tri!(lc::ints(CALL, sendcounts, no, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, no, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, ni, "rdispls"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Neighbor_alltoallv_init(sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtype, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtype, comm, info, request) }
    }

    fn Neighbor_alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Neighbor_alltoallw_c";
        let (ni, no) = crate::neighbor::degrees(comm);
        let sendcounts = tri!(lc::ints(CALL, sendcounts, no, "sendcounts"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Neighbor_alltoallw(sendbuf, lc::at(&sendcounts), sdispls, sendtypes, recvbuf, lc::at(&recvcounts), rdispls, recvtypes, comm) }
    }

    fn Neighbor_alltoallw_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Neighbor_alltoallw_init_c";
        let (ni, no) = crate::neighbor::degrees(comm);
        let sendcounts = tri!(lc::ints(CALL, sendcounts, no, "sendcounts"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Neighbor_alltoallw_init(sendbuf, lc::at(&sendcounts), sdispls, sendtypes, recvbuf, lc::at(&recvcounts), rdispls, recvtypes, comm, info, request) }
    }

    fn Reduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Reduce_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Reduce(sendbuf, recvbuf, count_.n, count_.t, op, root, comm) }
    }

    fn Reduce_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Reduce_init_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Reduce_init(sendbuf, recvbuf, count_.n, count_.t, op, root, comm, info, request) }
    }

    fn Reduce_local_c(inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op) -> c_int {
        const CALL: &str = "MPI_Reduce_local_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Reduce_local(inbuf, inoutbuf, count_.n, count_.t, op) }
    }

    fn Reduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Reduce_scatter_block_c";
        let recvcount_ = tri!(lc::reduced(CALL, recvcount, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount_.n, recvcount_.t, op, comm) }
    }

    fn Reduce_scatter_block_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Reduce_scatter_block_init_c";
        let recvcount_ = tri!(lc::reduced(CALL, recvcount, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount_.n, recvcount_.t, op, comm, info, request) }
    }

    fn Reduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Reduce_scatter_c";
        let c = tri!(comm_for(CALL, comm));
        let size = c.size() as usize;
        let recvcounts = tri!(lc::ints(CALL, recvcounts, size, "recvcounts"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Reduce_scatter(sendbuf, recvbuf, lc::at(&recvcounts), datatype, op, comm) }
    }

    fn Reduce_scatter_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Reduce_scatter_init_c";
        let c = tri!(comm_for(CALL, comm));
        let size = c.size() as usize;
        let recvcounts = tri!(lc::ints(CALL, recvcounts, size, "recvcounts"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Reduce_scatter_init(sendbuf, recvbuf, lc::at(&recvcounts), datatype, op, comm, info, request) }
    }

    fn Scan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Scan_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Scan(sendbuf, recvbuf, count_.n, count_.t, op, comm) }
    }

    fn Scan_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Scan_init_c";
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Scan_init(sendbuf, recvbuf, count_.n, count_.t, op, comm, info, request) }
    }

    fn Scatter_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Scatter_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Scatter(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, root, comm) }
    }

    fn Scatter_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Scatter_init_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Scatter_init(sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, root, comm, info, request) }
    }

    fn Scatterv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Scatterv_c";
        let c = tri!(comm_for(CALL, comm));
        let rooted = if c.is_root(root) { c.peer_count() } else { 0 };
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { rooted }, "sendcounts"));
        let displs = tri!(lc::ints(CALL, displs, rooted, "displs"));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Scatterv(sendbuf, lc::at(&sendcounts), lc::at(&displs), sendtype, recvbuf, recvcount_.n, recvcount_.t, root, comm) }
    }

    fn Scatterv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Scatterv_init_c";
        let c = tri!(comm_for(CALL, comm));
        let rooted = if c.is_root(root) { c.peer_count() } else { 0 };
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { rooted }, "sendcounts"));
        let displs = tri!(lc::ints(CALL, displs, rooted, "displs"));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Scatterv_init(sendbuf, lc::at(&sendcounts), lc::at(&displs), sendtype, recvbuf, recvcount_.n, recvcount_.t, root, comm, info, request) }
    }
}
