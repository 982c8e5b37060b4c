//! MPI-4.1's accessors of a status's public fields (MPI_Status_get_source,
//! MPI_Status_set_tag, ...), for languages that cannot reach the fields.
//! A NULL status or MPI_STATUS_IGNORE is an argument error.

use std::os::raw::c_int;

use mpcrs::ErrorClass;

use crate::export::mpi_fn;
use crate::handles::*;

/// Reads one field of `status` into `out`.
///
/// # Safety
/// `status` is a status or ignored; `out` is NULL or writable.
unsafe fn get(status: *mut MPI_Status, out: *mut c_int, field: fn(&MPI_Status) -> c_int) -> c_int {
    if status_ignored(status) || out.is_null() {
        return ErrorClass::Arg as c_int;
    }
    // SAFETY: both checked above and valid by contract.
    unsafe { *out = field(&*status) };
    MPI_SUCCESS
}

/// Writes one field of `status`.
///
/// # Safety
/// `status` is a writable status or ignored.
unsafe fn set(status: *mut MPI_Status, field: impl FnOnce(&mut MPI_Status)) -> c_int {
    if status_ignored(status) {
        return ErrorClass::Arg as c_int;
    }
    // SAFETY: checked above and writable by contract.
    field(unsafe { &mut *status });
    MPI_SUCCESS
}

mpi_fn! {
    fn Status_get_source(status: *mut MPI_Status, source: *mut c_int) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { get(status, source, |s| s.MPI_SOURCE) }
    }

    fn Status_set_source(status: *mut MPI_Status, source: c_int) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { set(status, |s| s.MPI_SOURCE = source) }
    }

    fn Status_get_tag(status: *mut MPI_Status, tag: *mut c_int) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { get(status, tag, |s| s.MPI_TAG) }
    }

    fn Status_set_tag(status: *mut MPI_Status, tag: c_int) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { set(status, |s| s.MPI_TAG = tag) }
    }

    fn Status_get_error(status: *mut MPI_Status, error: *mut c_int) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { get(status, error, |s| s.MPI_ERROR) }
    }

    fn Status_set_error(status: *mut MPI_Status, error: c_int) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { set(status, |s| s.MPI_ERROR = error) }
    }
}
