//! The bindings generated from mpi.h by build/fortran.rs: `mpi_name_` and
//! `pmpi_name_` for every C function with a Fortran form, and NOT_IN_FORTRAN,
//! the functions without one and why; and the specific procedures of the
//! `mpi` module's generic MPI_SIZEOF.
#![allow(clippy::too_many_arguments, clippy::missing_safety_doc)]

use std::os::raw::{c_char, c_int, c_void};

use super::addresses::Specials;
use super::strings::{InString, OutString};
use super::{file_from, file_to, set_ierror};

/// The class of an MPI-1 address result that does not fit an INTEGER.
const MPI_ERR_ARG: c_int = mpcrs::ErrorClass::Arg as c_int;

include!(concat!(env!("OUT_DIR"), "/fortran_bindings.rs"));

include!(concat!(env!("OUT_DIR"), "/fortran_sizeof.rs"));

/// MPI_SIZEOF's result: `bytes` in `size`, success in `ierror`.
///
/// # Safety
/// Both point to writable INTEGERs.
unsafe fn sized(size: *mut c_int, ierror: *mut c_int, bytes: c_int) {
    // SAFETY: by the caller's contract.
    unsafe {
        *size = bytes;
        set_ierror(ierror, 0);
    }
}
