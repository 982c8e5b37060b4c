//! MPI-4 large-count (`_c`) forms of the point-to-point calls, their persistent forms and the MPI_Bsend buffer.
//! Each takes the ordinary call's path (see large_count.rs): a count that
//! fits an int is passed as it is; a larger one is carried by a datatype
//! made for the call where the call allows it, and fails with MPI_ERR_COUNT
//! naming the call where it does not. Nothing is ever truncated.

use std::os::raw::{c_int, c_void};

use crate::ctypes::{MPI_Count, MPI_Message};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::large_count as lc;

mpi_fn! {
    fn Bsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Bsend_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Bsend(buf, count_.n, count_.t, dest, tag, comm) }
    }

    fn Bsend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Bsend_init_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Bsend_init(buf, count_.n, count_.t, dest, tag, comm, request) }
    }

    fn Buffer_attach_c(buffer: *mut c_void, size: MPI_Count) -> c_int {
        // The size is kept whole: the buffer may hold more than an int says.
        crate::bsend_buffers::attach_process(buffer, size.max(0) as usize)
    }

    fn Buffer_detach_c(buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
        let (addr, len) = tri!(crate::bsend_buffers::detach_process());
        // SAFETY: `buffer_addr` is a `void **` per MPI; `size` writable.
        unsafe {
            *(buffer_addr as *mut *mut c_void) = addr as *mut c_void;
            *size = len as MPI_Count;
        }
        MPI_SUCCESS
    }

    fn Ibsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ibsend_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ibsend(buf, count_.n, count_.t, dest, tag, comm, request) }
    }

    fn Imrecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Imrecv_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Imrecv(buf, count_.n, count_.t, message, request) }
    }

    fn Irecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Irecv_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Irecv(buf, count_.n, count_.t, source, tag, comm, request) }
    }

    fn Irsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Irsend_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Irsend(buf, count_.n, count_.t, dest, tag, comm, request) }
    }

    fn Isend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Isend_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Isend(buf, count_.n, count_.t, dest, tag, comm, request) }
    }

    fn Isendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Isendrecv_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Isendrecv(sendbuf, sendcount_.n, sendcount_.t, dest, sendtag, recvbuf, recvcount_.n, recvcount_.t, source, recvtag, comm, request) }
    }

    fn Isendrecv_replace_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Isendrecv_replace_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Isendrecv_replace(buf, count_.n, count_.t, dest, sendtag, source, recvtag, comm, request) }
    }

    fn Issend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Issend_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Issend(buf, count_.n, count_.t, dest, tag, comm, request) }
    }

    fn Mrecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_Mrecv_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Mrecv(buf, count_.n, count_.t, message, status) }
    }

    fn Recv_init_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Recv_init_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Recv_init(buf, count_.n, count_.t, source, tag, comm, request) }
    }

    fn Rsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Rsend_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Rsend(buf, count_.n, count_.t, dest, tag, comm) }
    }

    fn Rsend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Rsend_init_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Rsend_init(buf, count_.n, count_.t, dest, tag, comm, request) }
    }

    fn Send_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Send_init_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Send_init(buf, count_.n, count_.t, dest, tag, comm, request) }
    }

    fn Sendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_Sendrecv_c";
        let sendcount_ = tri!(lc::send_pair(CALL, sendbuf, sendcount, sendtype));
        let recvcount_ = tri!(lc::pair(CALL, recvcount, recvtype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Sendrecv(sendbuf, sendcount_.n, sendcount_.t, dest, sendtag, recvbuf, recvcount_.n, recvcount_.t, source, recvtag, comm, status) }
    }

    fn Sendrecv_replace_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_Sendrecv_replace_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Sendrecv_replace(buf, count_.n, count_.t, dest, sendtag, source, recvtag, comm, status) }
    }

    fn Ssend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Ssend_init_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Ssend_init(buf, count_.n, count_.t, dest, tag, comm, request) }
    }
}
