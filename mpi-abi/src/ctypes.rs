//! C types of mpi.h beyond the handles: the opaque objects MPICH's ABI passes
//! by pointer, the callback types, and the exported data symbols. The ABI check
//! (mpi-abi/check) compares every signature that uses them with the header.

#![allow(non_camel_case_types)]

use std::os::raw::{c_int, c_long, c_void};

use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Status};

pub type MPI_Fint = c_int;
pub type MPI_Offset = c_long;
pub type MPI_Count = c_long;
pub type MPI_Info = c_int;
pub type MPI_Group = c_int;
pub type MPI_Message = c_int;
pub type MPI_Win = c_int;

/// Opaque object behind `MPI_File` (a pointer in MPICH's ABI; none exist yet).
#[repr(C)]
pub struct mpcrs_file {
    _private: [u8; 0],
}
pub type MPI_File = *mut mpcrs_file;

macro_rules! opaque {
    ($($s:ident => $t:ident),* $(,)?) => {
        $(
            #[doc = concat!("Opaque object behind `", stringify!($t), "`.")]
            #[repr(C)]
            pub struct $s {
                _private: [u8; 0],
            }
            pub type $t = *mut $s;
        )*
    };
}

opaque! {
    mpcrs_t_enum => MPI_T_enum,
    mpcrs_t_cvar_handle => MPI_T_cvar_handle,
    mpcrs_t_pvar_handle => MPI_T_pvar_handle,
    mpcrs_t_pvar_session => MPI_T_pvar_session,
}

/// MPI_Type_copy_attr_function.
pub type TypeCopyAttrFn = unsafe extern "C" fn(
    oldtype: MPI_Datatype,
    keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int;
/// MPI_Type_delete_attr_function.
pub type TypeDeleteAttrFn = unsafe extern "C" fn(
    datatype: MPI_Datatype,
    keyval: c_int,
    attribute_val: *mut c_void,
    extra_state: *mut c_void,
) -> c_int;
/// MPI_Win_copy_attr_function.
pub type WinCopyAttrFn = unsafe extern "C" fn(
    oldwin: MPI_Win,
    keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int;
/// MPI_Win_delete_attr_function.
pub type WinDeleteAttrFn = unsafe extern "C" fn(
    win: MPI_Win,
    keyval: c_int,
    attribute_val: *mut c_void,
    extra_state: *mut c_void,
) -> c_int;
/// MPI_Comm_errhandler_function (and MPI-1's MPI_Handler_function).
pub type CommErrhandlerFn = unsafe extern "C" fn(comm: *mut MPI_Comm, code: *mut c_int, ...);
/// MPI_Win_errhandler_function.
pub type WinErrhandlerFn = unsafe extern "C" fn(win: *mut MPI_Win, code: *mut c_int, ...);
/// MPI_File_errhandler_function.
pub type FileErrhandlerFn = unsafe extern "C" fn(fh: *mut MPI_File, code: *mut c_int, ...);
/// MPI_Grequest_query_function.
pub type GrequestQueryFn =
    unsafe extern "C" fn(extra_state: *mut c_void, status: *mut MPI_Status) -> c_int;
/// MPI_Grequest_free_function.
pub type GrequestFreeFn = unsafe extern "C" fn(extra_state: *mut c_void) -> c_int;
/// MPI_Grequest_cancel_function.
pub type GrequestCancelFn =
    unsafe extern "C" fn(extra_state: *mut c_void, complete: c_int) -> c_int;
/// MPI_Datarep_conversion_function.
pub type DatarepConversionFn = unsafe extern "C" fn(
    userbuf: *mut c_void,
    datatype: MPI_Datatype,
    count: c_int,
    filebuf: *mut c_void,
    position: MPI_Offset,
    extra_state: *mut c_void,
) -> c_int;
/// MPI_Datarep_conversion_function_c (MPI_Register_datarep_c).
pub type DatarepConversionFnC = unsafe extern "C" fn(
    userbuf: *mut c_void,
    datatype: MPI_Datatype,
    count: MPI_Count,
    filebuf: *mut c_void,
    position: MPI_Offset,
    extra_state: *mut c_void,
) -> c_int;
/// MPI_Datarep_extent_function.
pub type DatarepExtentFn = unsafe extern "C" fn(
    datatype: MPI_Datatype,
    extent: *mut crate::handles::MPI_Aint,
    extra_state: *mut c_void,
) -> c_int;

/// An address exported as a constant (`extern int *const MPI_UNWEIGHTED`).
#[repr(transparent)]
pub struct Address(*const c_int);
// SAFETY: the address of a static, never written through.
unsafe impl Sync for Address {}

impl Address {
    pub(crate) fn as_ptr(&self) -> *const c_int {
        self.0
    }
}

static UNWEIGHTED_TARGET: c_int = 0;
static WEIGHTS_EMPTY_TARGET: c_int = 0;
static F_STATUS_IGNORE_TARGET: c_int = 0;

/// Whether a weights argument is MPI_UNWEIGHTED.
pub(crate) fn is_unweighted(p: *const c_int) -> bool {
    std::ptr::eq(p, &UNWEIGHTED_TARGET)
}

/// Whether a weights argument is MPI_WEIGHTS_EMPTY.
pub(crate) fn is_weights_empty(p: *const c_int) -> bool {
    std::ptr::eq(p, &WEIGHTS_EMPTY_TARGET)
}

/// MPI_UNWEIGHTED: a distinct address, never dereferenced.
#[no_mangle]
pub static MPI_UNWEIGHTED: Address = Address(&UNWEIGHTED_TARGET);
/// MPI_WEIGHTS_EMPTY: a distinct address, never dereferenced.
#[no_mangle]
pub static MPI_WEIGHTS_EMPTY: Address = Address(&WEIGHTS_EMPTY_TARGET);
/// MPI_F_STATUS_IGNORE (Fortran status arguments).
#[no_mangle]
pub static MPI_F_STATUS_IGNORE: Address = Address(&F_STATUS_IGNORE_TARGET);
/// MPI_F_STATUSES_IGNORE.
#[no_mangle]
pub static MPI_F_STATUSES_IGNORE: Address = Address(&F_STATUS_IGNORE_TARGET);
