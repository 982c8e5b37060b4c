//! Reading and writing statuses: element counts, and the fields a
//! generalized request's query function sets.

use std::os::raw::c_int;

use mpcrs::ErrorClass;

use crate::ctypes::MPI_Count;
use crate::datatype;
use crate::export::mpi_fn;
use crate::handles::*;

/// Basic elements of `t` in the bytes a status records; MPI_UNDEFINED when
/// they end inside one.
///
/// # Safety
/// `status` is readable.
unsafe fn elements(status: *const MPI_Status, t: MPI_Datatype) -> Result<i64, c_int> {
    let ti = datatype::info(t).ok_or(ErrorClass::Type as c_int)?;
    // SAFETY: readable by contract.
    let bytes = status_bytes(unsafe { &*status }) as usize;
    Ok(ti
        .elements_in(bytes)
        .map_or(MPI_UNDEFINED as i64, |n| n as i64))
}

/// Records `bytes` in a status, keeping its cancelled flag.
///
/// # Safety
/// `status` is writable.
unsafe fn set_bytes(status: *mut MPI_Status, bytes: u64) {
    // SAFETY: writable by contract.
    let s = unsafe { &mut *status };
    let cancelled = s.count_hi_and_cancelled & 1;
    s.count_lo = bytes as u32 as c_int;
    s.count_hi_and_cancelled = (((bytes >> 32) as c_int) << 1) | cancelled;
}

mpi_fn! {
    fn Get_elements(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut c_int) -> c_int {
        // SAFETY: `status` readable by contract.
        match unsafe { elements(status, datatype) } {
            Ok(n) => {
                let n = if n > c_int::MAX as i64 { MPI_UNDEFINED } else { n as c_int };
                // SAFETY: writable by contract.
                unsafe { *count = n };
                MPI_SUCCESS
            }
            Err(code) => code,
        }
    }

    fn Get_elements_x(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
        // SAFETY: `status` readable by contract.
        match unsafe { elements(status, datatype) } {
            Ok(n) => {
                // SAFETY: writable by contract.
                unsafe { *count = n as MPI_Count };
                MPI_SUCCESS
            }
            Err(code) => code,
        }
    }

    fn Status_set_elements(status: *mut MPI_Status, datatype: MPI_Datatype, count: c_int) -> c_int {
        // SAFETY: forwarded.
        unsafe { PMPI_Status_set_elements_x(status, datatype, count as MPI_Count) }
    }

    fn Status_set_elements_x(status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) -> c_int {
        let Some(ti) = datatype::info(datatype) else { return ErrorClass::Type as c_int };
        if count < 0 || status_ignored(status) {
            return ErrorClass::Arg as c_int;
        }
        // SAFETY: writable by contract.
        unsafe { set_bytes(status, ti.bytes_of_elements(count as usize) as u64) };
        MPI_SUCCESS
    }

    fn Status_set_elements_c(status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) -> c_int {
        // SAFETY: forwarded (the same meaning as MPI_Status_set_elements_x).
        unsafe { PMPI_Status_set_elements_x(status, datatype, count) }
    }

    fn Status_set_cancelled(status: *mut MPI_Status, flag: c_int) -> c_int {
        if status_ignored(status) {
            return ErrorClass::Arg as c_int;
        }
        // SAFETY: writable by contract.
        unsafe {
            let s = &mut *status;
            s.count_hi_and_cancelled = (s.count_hi_and_cancelled & !1) | (flag != 0) as c_int;
        }
        MPI_SUCCESS
    }
}
