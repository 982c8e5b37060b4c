//! MPI-4 large-count (`_c`) forms of the one-sided communication calls and window creation.
//! Each takes the ordinary call's path (see large_count.rs): a count that
//! fits an int is passed as it is; a larger one is carried by a datatype
//! made for the call where the call allows it, and fails with MPI_ERR_COUNT
//! naming the call where it does not. Nothing is ever truncated.

use std::os::raw::{c_int, c_void};

use crate::ctypes::{MPI_Count, MPI_Info, MPI_Win};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::large_count as lc;

mpi_fn! {
    fn Accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        const CALL: &str = "MPI_Accumulate_c";
        let origin_count = tri!(lc::int(CALL, origin_count, "origin_count"));
        let target_count = tri!(lc::int(CALL, target_count, "target_count"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win) }
    }

    fn Get_accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: MPI_Count, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        const CALL: &str = "MPI_Get_accumulate_c";
        let origin_count = tri!(lc::int(CALL, origin_count, "origin_count"));
        let result_count = tri!(lc::int(CALL, result_count, "result_count"));
        let target_count = tri!(lc::int(CALL, target_count, "target_count"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win) }
    }

    fn Get_c(origin_addr: *mut c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
        const CALL: &str = "MPI_Get_c";
        let origin_count = tri!(lc::int(CALL, origin_count, "origin_count"));
        let target_count = tri!(lc::int(CALL, target_count, "target_count"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win) }
    }

    fn Put_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
        const CALL: &str = "MPI_Put_c";
        let origin_count = tri!(lc::int(CALL, origin_count, "origin_count"));
        let target_count = tri!(lc::int(CALL, target_count, "target_count"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win) }
    }

    fn Raccumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Raccumulate_c";
        let origin_count = tri!(lc::int(CALL, origin_count, "origin_count"));
        let target_count = tri!(lc::int(CALL, target_count, "target_count"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request) }
    }

    fn Rget_accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: MPI_Count, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Rget_accumulate_c";
        let origin_count = tri!(lc::int(CALL, origin_count, "origin_count"));
        let result_count = tri!(lc::int(CALL, result_count, "result_count"));
        let target_count = tri!(lc::int(CALL, target_count, "target_count"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request) }
    }

    fn Rget_c(origin_addr: *mut c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Rget_c";
        let origin_count = tri!(lc::int(CALL, origin_count, "origin_count"));
        let target_count = tri!(lc::int(CALL, target_count, "target_count"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request) }
    }

    fn Rput_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Rput_c";
        let origin_count = tri!(lc::int(CALL, origin_count, "origin_count"));
        let target_count = tri!(lc::int(CALL, target_count, "target_count"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request) }
    }

    fn Win_allocate_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        const CALL: &str = "MPI_Win_allocate_c";
        let disp_unit = tri!(lc::int(CALL, disp_unit, "disp_unit"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win) }
    }

    fn Win_allocate_shared_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        const CALL: &str = "MPI_Win_allocate_shared_c";
        let disp_unit = tri!(lc::int(CALL, disp_unit, "disp_unit"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win) }
    }

    fn Win_create_c(base: *mut c_void, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        const CALL: &str = "MPI_Win_create_c";
        let disp_unit = tri!(lc::int(CALL, disp_unit, "disp_unit"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Win_create(base, size, disp_unit, info, comm, win) }
    }

    fn Win_shared_query_c(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut MPI_Aint, baseptr: *mut c_void) -> c_int {
        let mut disp_unit_: c_int = 0;
        // SAFETY: the caller's arguments, counts narrowed; outputs written back widened.
        unsafe {
            let rc = crate::abi::PMPI_Win_shared_query(win, rank, size, &mut disp_unit_, baseptr);
            if rc == MPI_SUCCESS && !disp_unit.is_null() { *disp_unit = disp_unit_ as MPI_Aint; }
            rc
        }
    }
}
