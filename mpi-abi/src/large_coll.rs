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

/// Defines the large-count forms of one collective from one description:
/// `[forms] Name(params) |CALL| { statements } => (arguments);` gives, for
/// each form named, `MPI_Name_c` (blocking), `MPI_Iname_c` (nonblocking,
/// with `request`) or `MPI_Name_init_c` (persistent, with `info` and
/// `request`). Each runs the statements (which narrow or carry the counts,
/// with `CALL` naming the call) and then the ordinary call with `arguments`.
macro_rules! large_forms {
    ($( [$($form:ident)+] $name:ident $params:tt |$call:ident| $prep:tt => $out:tt; )*) => {
        $( $( large_forms!(@$form $name $params |$call| $prep => $out); )+ )*
    };
    (@blocking $name:ident ( $($arg:ident : $ty:ty),* ) |$call:ident| { $($prep:stmt;)* } => ( $($out:expr),* )) => {
        paste::paste! {
            mpi_fn! {
                fn [<$name _c>]( $($arg : $ty),* ) -> c_int {
                    const $call: &str = concat!("MPI_", stringify!([<$name _c>]));
                    $($prep;)*
                    // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
                    unsafe { crate::abi::[<PMPI_ $name>]( $($out),* ) }
                }
            }
        }
    };
    (@nonblocking $name:ident ( $($arg:ident : $ty:ty),* ) |$call:ident| { $($prep:stmt;)* } => ( $($out:expr),* )) => {
        paste::paste! {
            mpi_fn! {
                fn [<I $name:lower _c>]( $($arg : $ty,)* request: *mut MPI_Request ) -> c_int {
                    const $call: &str = concat!("MPI_", stringify!([<I $name:lower _c>]));
                    $($prep;)*
                    // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
                    unsafe { crate::abi::[<PMPI_I $name:lower>]( $($out,)* request ) }
                }
            }
        }
    };
    (@persistent $name:ident ( $($arg:ident : $ty:ty),* ) |$call:ident| { $($prep:stmt;)* } => ( $($out:expr),* )) => {
        paste::paste! {
            mpi_fn! {
                fn [<$name _init_c>]( $($arg : $ty,)* info: MPI_Info, request: *mut MPI_Request ) -> c_int {
                    const $call: &str = concat!("MPI_", stringify!([<$name _init_c>]));
                    $($prep;)*
                    // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
                    unsafe { crate::abi::[<PMPI_ $name _init>]( $($out,)* info, request ) }
                }
            }
        }
    };
}

large_forms! {
    [blocking nonblocking persistent] Allgather(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) |CALL| {
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm);

    [blocking nonblocking persistent] Allgatherv(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) |CALL| {
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, peers, "displs"));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, comm);

    [blocking nonblocking persistent] Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) |CALL| {
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
    } => (sendbuf, recvbuf, count_.n, count_.t, op, comm);

    [blocking nonblocking persistent] Alltoall(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) |CALL| {
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm);

    [nonblocking persistent] Alltoallv(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) |CALL| {
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { peers }, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, if is_in_place(sendbuf) { 0 } else { peers }, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, peers, "rdispls"));
    } => (sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtype, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtype, comm);

    [blocking nonblocking persistent] Alltoallw(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) |CALL| {
        let c = tri!(comm_for(CALL, comm));
        let peers = c.peer_count();
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { peers }, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, if is_in_place(sendbuf) { 0 } else { peers }, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, peers, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, peers, "rdispls"));
    } => (sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtypes, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtypes, comm);

    [nonblocking persistent] Bcast(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) |CALL| {
        let count_ = tri!(lc::pair(CALL, count, datatype));
    } => (buffer, count_.n, count_.t, root, comm);

    [blocking nonblocking persistent] Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) |CALL| {
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
    } => (sendbuf, recvbuf, count_.n, count_.t, op, comm);

    [blocking nonblocking persistent] Gather(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) |CALL| {
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, root, comm);

    [blocking nonblocking persistent] Gatherv(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) |CALL| {
        let c = tri!(comm_for(CALL, comm));
        let rooted = if c.is_root(root) { c.peer_count() } else { 0 };
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, rooted, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, rooted, "displs"));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, root, comm);

    [blocking nonblocking persistent] Neighbor_allgather(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) |CALL| {
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm);

    [blocking nonblocking persistent] Neighbor_allgatherv(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) |CALL| {
        let (ni, _) = crate::neighbor::degrees(comm);
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        let displs = tri!(lc::ints(CALL, displs, ni, "displs"));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, lc::at(&recvcounts), lc::at(&displs), recvtype, comm);

    [blocking nonblocking persistent] Neighbor_alltoall(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) |CALL| {
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, comm);

    [blocking nonblocking persistent] Neighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) |CALL| {
        let (ni, no) = crate::neighbor::degrees(comm);
        let sendcounts = tri!(lc::ints(CALL, sendcounts, no, "sendcounts"));
        let sdispls = tri!(lc::ints(CALL, sdispls, no, "sdispls"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
        let rdispls = tri!(lc::ints(CALL, rdispls, ni, "rdispls"));
    } => (sendbuf, lc::at(&sendcounts), lc::at(&sdispls), sendtype, recvbuf, lc::at(&recvcounts), lc::at(&rdispls), recvtype, comm);

    [blocking nonblocking persistent] Neighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) |CALL| {
        let (ni, no) = crate::neighbor::degrees(comm);
        let sendcounts = tri!(lc::ints(CALL, sendcounts, no, "sendcounts"));
        let recvcounts = tri!(lc::ints(CALL, recvcounts, ni, "recvcounts"));
    } => (sendbuf, lc::at(&sendcounts), sdispls, sendtypes, recvbuf, lc::at(&recvcounts), rdispls, recvtypes, comm);

    [blocking nonblocking persistent] Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) |CALL| {
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
    } => (sendbuf, recvbuf, count_.n, count_.t, op, root, comm);

    [blocking] Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op) |CALL| {
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
    } => (inbuf, inoutbuf, count_.n, count_.t, op);

    [blocking nonblocking persistent] Reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) |CALL| {
        let c = tri!(comm_for(CALL, comm));
        let size = c.size() as usize;
        let recvcounts = tri!(lc::ints(CALL, recvcounts, size, "recvcounts"));
    } => (sendbuf, recvbuf, lc::at(&recvcounts), datatype, op, comm);

    [blocking nonblocking persistent] Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) |CALL| {
        let recvcount_ = tri!(lc::reduced(CALL, recvcount, datatype, op));
    } => (sendbuf, recvbuf, recvcount_.n, recvcount_.t, op, comm);

    [blocking nonblocking persistent] Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) |CALL| {
        let count_ = tri!(lc::reduced(CALL, count, datatype, op));
    } => (sendbuf, recvbuf, count_.n, count_.t, op, comm);

    [blocking nonblocking persistent] Scatter(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) |CALL| {
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
    } => (sendbuf, sendcount_.n, sendcount_.t, recvbuf, recvcount_.n, recvcount_.t, root, comm);

    [blocking nonblocking persistent] Scatterv(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) |CALL| {
        let c = tri!(comm_for(CALL, comm));
        let rooted = if c.is_root(root) { c.peer_count() } else { 0 };
        let sendcounts = tri!(lc::ints(CALL, sendcounts, if is_in_place(sendbuf) { 0 } else { rooted }, "sendcounts"));
        let displs = tri!(lc::ints(CALL, displs, rooted, "displs"));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
    } => (sendbuf, lc::at(&sendcounts), lc::at(&displs), sendtype, recvbuf, recvcount_.n, recvcount_.t, root, comm);
}
