//! Fortran: the bindings `mpi_send_`, `pmpi_send_`, ... of libmpi (gfortran's
//! conventions), and the C side's conversions. Handles are the same integers
//! in the MPICH ABI (the conversions are identities, exported under the C
//! names MPICH uses) but for MPI_File, and a Fortran status is MPI_Status's
//! five integers in the same order.
//!
//! - `generated`: the bindings made from mpi.h by build/fortran.rs;
//! - `by_hand`: the few whose Fortran form differs from C's;
//! - `keyvals`: keyvals with Fortran copy and delete procedures;
//! - `grequests`: generalized requests with Fortran procedures;
//! - `addresses`: mpif.h's MPI_BOTTOM, MPI_IN_PLACE, ... recognised by address;
//! - `strings`: character arguments and their hidden lengths.

/// Defines the `mpi_` and `pmpi_` forms of a binding from one body written
/// with `call(...)` for the C function (MPI_ or PMPI_ respectively).
macro_rules! both {
    ($( fn $name:ident / $pname:ident ( $($arg:ident : $ty:ty),* ) calls $c:ident = $mpi:ident / $pmpi:ident $(-> $ret:ty)? $body:block )*) => {
        $(
            #[no_mangle]
            pub unsafe extern "C-unwind" fn $name( $($arg : $ty),* ) $(-> $ret)? {
                let $c = $mpi;
                // SAFETY: Fortran passes every argument by reference to storage of
                // the kind mpif.h declares.
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
            #[no_mangle]
            pub unsafe extern "C-unwind" fn $pname( $($arg : $ty),* ) $(-> $ret)? {
                let $c = $pmpi;
                // SAFETY: as above.
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
        )*
    };
}

mod addresses;
mod by_hand;
mod generated;
mod grequests;
mod keyvals;
mod strings;

pub(crate) use addresses::note_copy;
pub use generated::NOT_IN_FORTRAN;

use std::os::raw::c_int;

use crate::ctypes::{MPI_File, MPI_Fint};
use crate::export::mpi_fn;
use crate::handles::*;

macro_rules! c2f {
    ($($c2f:ident, $f2c:ident;)*) => {
        $(
            #[no_mangle]
            pub extern "C-unwind" fn $c2f(h: c_int) -> c_int {
                h
            }
            #[no_mangle]
            pub extern "C-unwind" fn $f2c(h: c_int) -> c_int {
                h
            }
        )*
    };
}

c2f! {
    MPI_Comm_c2f, MPI_Comm_f2c;
    MPI_Type_c2f, MPI_Type_f2c;
    MPI_Group_c2f, MPI_Group_f2c;
    MPI_Request_c2f, MPI_Request_f2c;
    MPI_Op_c2f, MPI_Op_f2c;
    MPI_Info_c2f, MPI_Info_f2c;
    MPI_Errhandler_c2f, MPI_Errhandler_f2c;
    MPI_Message_c2f, MPI_Message_f2c;
    PMPI_Message_c2f, PMPI_Message_f2c;
    MPI_Win_c2f, MPI_Win_f2c;
}

mpi_fn! {
    fn File_c2f(file: MPI_File) -> MPI_Fint {
        crate::files::to_fortran(file)
    }

    fn File_f2c(file: MPI_Fint) -> MPI_File {
        crate::files::from_fortran(file)
    }

    fn Status_c2f(c_status: *const MPI_Status, f_status: *mut MPI_Fint) -> c_int {
        if status_ignored(c_status) || f_status.is_null() {
            return mpcrs::ErrorClass::Arg as c_int;
        }
        // SAFETY: a valid status and five writable integers, by contract;
        // MPI_Status is five c_ints with no padding.
        unsafe { std::ptr::copy_nonoverlapping(c_status.cast::<MPI_Fint>(), f_status, 5) };
        MPI_SUCCESS
    }

    fn Status_f2c(f_status: *const MPI_Fint, c_status: *mut MPI_Status) -> c_int {
        if f_status.is_null() || status_ignored(c_status) {
            return mpcrs::ErrorClass::Arg as c_int;
        }
        // SAFETY: as MPI_Status_c2f, the other way.
        unsafe { std::ptr::copy_nonoverlapping(f_status, c_status.cast::<MPI_Fint>(), 5) };
        MPI_SUCCESS
    }
}

/// Stores a binding's result in its `ierror` argument.
///
/// # Safety
/// `ierror` is null or points to a writable INTEGER.
unsafe fn set_ierror(ierror: *mut c_int, rc: c_int) {
    if !ierror.is_null() {
        // SAFETY: by the caller's contract.
        unsafe { *ierror = rc };
    }
}

/// The C handle of a Fortran file handle.
fn file_from(f: MPI_Fint) -> *mut std::os::raw::c_void {
    crate::files::from_fortran(f).cast()
}

/// The Fortran handle of a C file handle.
fn file_to(h: *mut std::os::raw::c_void) -> MPI_Fint {
    crate::files::to_fortran(h.cast())
}
