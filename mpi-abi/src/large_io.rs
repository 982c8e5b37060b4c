//! MPI-4 large-count (`_c`) forms of the MPI-IO data access calls.
//! Each takes the ordinary call's path (see large_count.rs): a count that
//! fits an int is passed as it is; a larger one is carried by a datatype
//! made for the call where the call allows it, and fails with MPI_ERR_COUNT
//! naming the call where it does not. Nothing is ever truncated.

use std::os::raw::{c_int, c_void};

use crate::ctypes::{MPI_Count, MPI_File, MPI_Offset};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::large_count as lc;

mpi_fn! {
    fn File_get_type_extent_c(fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Count) -> c_int {
        // SAFETY: the caller's arguments, the same types.
        unsafe { crate::abi::PMPI_File_get_type_extent(fh, datatype, extent.cast()) }
    }

    fn File_iread_all_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iread_all_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iread_all(fh, buf, count_.n, count_.t, request) }
    }

    fn File_iread_at_all_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iread_at_all_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iread_at_all(fh, offset, buf, count_.n, count_.t, request) }
    }

    fn File_iread_at_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iread_at_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iread_at(fh, offset, buf, count_.n, count_.t, request) }
    }

    fn File_iread_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iread_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iread(fh, buf, count_.n, count_.t, request) }
    }

    fn File_iread_shared_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iread_shared_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iread_shared(fh, buf, count_.n, count_.t, request) }
    }

    fn File_iwrite_all_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iwrite_all_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iwrite_all(fh, buf, count_.n, count_.t, request) }
    }

    fn File_iwrite_at_all_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iwrite_at_all_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iwrite_at_all(fh, offset, buf, count_.n, count_.t, request) }
    }

    fn File_iwrite_at_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iwrite_at_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iwrite_at(fh, offset, buf, count_.n, count_.t, request) }
    }

    fn File_iwrite_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iwrite_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iwrite(fh, buf, count_.n, count_.t, request) }
    }

    fn File_iwrite_shared_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_File_iwrite_shared_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_iwrite_shared(fh, buf, count_.n, count_.t, request) }
    }

    fn File_read_all_begin_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_File_read_all_begin_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read_all_begin(fh, buf, count_.n, count_.t) }
    }

    fn File_read_all_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_read_all_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read_all(fh, buf, count_.n, count_.t, status) }
    }

    fn File_read_at_all_begin_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_File_read_at_all_begin_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read_at_all_begin(fh, offset, buf, count_.n, count_.t) }
    }

    fn File_read_at_all_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_read_at_all_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read_at_all(fh, offset, buf, count_.n, count_.t, status) }
    }

    fn File_read_at_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_read_at_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read_at(fh, offset, buf, count_.n, count_.t, status) }
    }

    fn File_read_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_read_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read(fh, buf, count_.n, count_.t, status) }
    }

    fn File_read_ordered_begin_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_File_read_ordered_begin_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read_ordered_begin(fh, buf, count_.n, count_.t) }
    }

    fn File_read_ordered_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_read_ordered_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read_ordered(fh, buf, count_.n, count_.t, status) }
    }

    fn File_read_shared_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_read_shared_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_read_shared(fh, buf, count_.n, count_.t, status) }
    }

    fn File_write_all_begin_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_File_write_all_begin_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write_all_begin(fh, buf, count_.n, count_.t) }
    }

    fn File_write_all_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_write_all_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write_all(fh, buf, count_.n, count_.t, status) }
    }

    fn File_write_at_all_begin_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_File_write_at_all_begin_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write_at_all_begin(fh, offset, buf, count_.n, count_.t) }
    }

    fn File_write_at_all_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_write_at_all_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write_at_all(fh, offset, buf, count_.n, count_.t, status) }
    }

    fn File_write_at_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_write_at_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write_at(fh, offset, buf, count_.n, count_.t, status) }
    }

    fn File_write_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_write_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write(fh, buf, count_.n, count_.t, status) }
    }

    fn File_write_ordered_begin_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_File_write_ordered_begin_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write_ordered_begin(fh, buf, count_.n, count_.t) }
    }

    fn File_write_ordered_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_write_ordered_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write_ordered(fh, buf, count_.n, count_.t, status) }
    }

    fn File_write_shared_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
        const CALL: &str = "MPI_File_write_shared_c";
        let count_ = tri!(lc::pair(CALL, count, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_File_write_shared(fh, buf, count_.n, count_.t, status) }
    }
}
