//! Keyvals made from Fortran: the copy and delete procedures have Fortran
//! interfaces (every argument by reference, attribute values as INTEGERs,
//! `ierror` instead of a result), so the C keyval gets trampolines that call
//! them, with the procedures and the Fortran extra state behind its
//! `extra_state`. Attribute values set from Fortran are kept as C's pointer
//! itself (see by_hand.rs), so they pass through unchanged.
//!
//! Also the predefined procedures of mpif.h (MPI_COMM_NULL_COPY_FN,
//! MPI_COMM_DUP_FN, ... and MPI-1's MPI_NULL_COPY_FN, MPI_DUP_FN,
//! MPI_NULL_DELETE_FN), as Fortran procedures. The keyvals are marked as
//! Fortran's, so their procedures get values as Fortran set them.
//!
//! The box behind a keyval's extra state lives as long as the process: MPI may
//! still call the procedures after MPI_*_free_keyval, for the attributes
//! objects keep.

use std::os::raw::{c_int, c_void};

use super::set_ierror;

/// MPI-2's copy procedure: (old, keyval, extra_state, value_in, value_out, flag, ierror).
type CopyFn = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *const i64,
    *const i64,
    *mut i64,
    *mut c_int,
    *mut c_int,
);
/// MPI-2's delete procedure: (object, keyval, value, extra_state, ierror).
type DeleteFn =
    unsafe extern "C" fn(*const c_int, *const c_int, *const i64, *const i64, *mut c_int);
/// MPI-1's, with default INTEGERs for the extra state and the values.
type CopyFn1 = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *const c_int,
    *const c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
);
type DeleteFn1 =
    unsafe extern "C" fn(*const c_int, *const c_int, *const c_int, *const c_int, *mut c_int);

/// What a keyval made from Fortran keeps behind its C extra state.
struct Procedures<C, D> {
    copy: C,
    delete: D,
    extra: i64,
}

/// C's copy callback of a keyval made by MPI_*_CREATE_KEYVAL.
unsafe extern "C" fn copy_trampoline(
    old: c_int,
    keyval: c_int,
    extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: `extra` is the box this module made for the keyval (never freed);
    // `value_out` points to the attribute's new value and `flag` to an int (MPI's contract).
    unsafe {
        let p = &*(extra as *const Procedures<CopyFn, DeleteFn>);
        let (input, mut output, mut ierror) = (value_in as i64, 0i64, 0);
        *flag = 0;
        (p.copy)(
            &old,
            &keyval,
            &p.extra,
            &input,
            &mut output,
            flag,
            &mut ierror,
        );
        *(value_out as *mut *mut c_void) = output as *mut c_void;
        ierror
    }
}

/// C's delete callback of a keyval made by MPI_*_CREATE_KEYVAL.
unsafe extern "C" fn delete_trampoline(
    object: c_int,
    keyval: c_int,
    value: *mut c_void,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: as copy_trampoline.
    unsafe {
        let p = &*(extra as *const Procedures<CopyFn, DeleteFn>);
        let (value, mut ierror) = (value as i64, 0);
        (p.delete)(&object, &keyval, &value, &p.extra, &mut ierror);
        ierror
    }
}

/// C's copy callback of a keyval made by MPI_KEYVAL_CREATE (MPI-1).
unsafe extern "C" fn copy_trampoline_1(
    old: c_int,
    keyval: c_int,
    extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: as copy_trampoline, with MPI-1's procedures in the box.
    unsafe {
        let p = &*(extra as *const Procedures<CopyFn1, DeleteFn1>);
        let (input, mut output, mut ierror) = (value_in as i64 as c_int, 0, 0);
        let state = p.extra as c_int;
        *flag = 0;
        (p.copy)(
            &old,
            &keyval,
            &state,
            &input,
            &mut output,
            flag,
            &mut ierror,
        );
        *(value_out as *mut *mut c_void) = output as isize as *mut c_void;
        ierror
    }
}

/// C's delete callback of a keyval made by MPI_KEYVAL_CREATE (MPI-1).
unsafe extern "C" fn delete_trampoline_1(
    object: c_int,
    keyval: c_int,
    value: *mut c_void,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: as copy_trampoline_1.
    unsafe {
        let p = &*(extra as *const Procedures<CopyFn1, DeleteFn1>);
        let (value, state, mut ierror) = (value as i64 as c_int, p.extra as c_int, 0);
        (p.delete)(&object, &keyval, &value, &state, &mut ierror);
        ierror
    }
}

type CCopy =
    unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
type CDelete = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;
type CCreate = unsafe extern "C" fn(CCopy, CDelete, *mut c_int, *mut c_void) -> c_int;

extern "C" {
    fn MPI_Comm_create_keyval(c: CCopy, d: CDelete, k: *mut c_int, e: *mut c_void) -> c_int;
    fn PMPI_Comm_create_keyval(c: CCopy, d: CDelete, k: *mut c_int, e: *mut c_void) -> c_int;
    fn MPI_Type_create_keyval(c: CCopy, d: CDelete, k: *mut c_int, e: *mut c_void) -> c_int;
    fn PMPI_Type_create_keyval(c: CCopy, d: CDelete, k: *mut c_int, e: *mut c_void) -> c_int;
    fn MPI_Win_create_keyval(c: CCopy, d: CDelete, k: *mut c_int, e: *mut c_void) -> c_int;
    fn PMPI_Win_create_keyval(c: CCopy, d: CDelete, k: *mut c_int, e: *mut c_void) -> c_int;
    fn MPI_Keyval_create(c: CCopy, d: CDelete, k: *mut c_int, e: *mut c_void) -> c_int;
    fn PMPI_Keyval_create(c: CCopy, d: CDelete, k: *mut c_int, e: *mut c_void) -> c_int;
}

/// Makes a C keyval whose callbacks are `trampolines`, with `procedures`
/// behind its extra state, and marks it Fortran's; the result in `ierror`.
///
/// # Safety
/// `keyval` and `ierror` are the Fortran arguments of the create call, and
/// the trampolines read the box as `Procedures<C, D>`.
unsafe fn register<C, D>(
    c_create: CCreate,
    trampolines: (CCopy, CDelete),
    procedures: Procedures<C, D>,
    keyval: *mut c_int,
    ierror: *mut c_int,
) {
    let procedures = Box::into_raw(Box::new(procedures));
    // SAFETY: trampolines of C's signatures, and the box they expect.
    let rc = unsafe { c_create(trampolines.0, trampolines.1, keyval, procedures.cast()) };
    if rc != 0 {
        // SAFETY: no keyval refers to the box.
        drop(unsafe { Box::from_raw(procedures) });
    } else {
        // SAFETY: the C call wrote the new keyval.
        crate::attributes::speaks_fortran(unsafe { *keyval });
    }
    // SAFETY: `ierror` is the Fortran INTEGER.
    unsafe { set_ierror(ierror, rc) };
}

/// MPI_{COMM,TYPE,WIN}_CREATE_KEYVAL(copy, delete, keyval, extra_state, ierror).
///
/// # Safety
/// The Fortran arguments of those calls.
unsafe fn create(
    c_create: CCreate,
    copy: CopyFn,
    delete: DeleteFn,
    keyval: *mut c_int,
    extra: *const i64,
    ierror: *mut c_int,
) {
    // SAFETY: `extra` is an INTEGER(KIND=MPI_ADDRESS_KIND) by reference.
    let extra = unsafe { *extra };
    let procedures = Procedures {
        copy,
        delete,
        extra,
    };
    // SAFETY: the trampolines read `Procedures<CopyFn, DeleteFn>`.
    unsafe {
        register(
            c_create,
            (copy_trampoline, delete_trampoline),
            procedures,
            keyval,
            ierror,
        )
    }
}

macro_rules! create_keyval {
    ($($name:ident => $c:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            copy: CopyFn,
            delete: DeleteFn,
            keyval: *mut c_int,
            extra: *const i64,
            ierror: *mut c_int,
        ) {
            // SAFETY: the Fortran arguments of the call.
            unsafe { create($c, copy, delete, keyval, extra, ierror) }
        }
    )*};
}

create_keyval! {
    mpi_comm_create_keyval_ => MPI_Comm_create_keyval;
    pmpi_comm_create_keyval_ => PMPI_Comm_create_keyval;
    mpi_type_create_keyval_ => MPI_Type_create_keyval;
    pmpi_type_create_keyval_ => PMPI_Type_create_keyval;
    mpi_win_create_keyval_ => MPI_Win_create_keyval;
    pmpi_win_create_keyval_ => PMPI_Win_create_keyval;
}

/// MPI_KEYVAL_CREATE(copy, delete, keyval, extra_state, ierror), MPI-1's.
///
/// # Safety
/// The Fortran arguments of that call.
unsafe fn create_1(
    c_create: CCreate,
    copy: CopyFn1,
    delete: DeleteFn1,
    keyval: *mut c_int,
    extra: *const c_int,
    ierror: *mut c_int,
) {
    // SAFETY: `extra` is an INTEGER by reference.
    let extra = unsafe { *extra } as i64;
    let procedures = Procedures {
        copy,
        delete,
        extra,
    };
    // SAFETY: the trampolines read `Procedures<CopyFn1, DeleteFn1>`.
    unsafe {
        register(
            c_create,
            (copy_trampoline_1, delete_trampoline_1),
            procedures,
            keyval,
            ierror,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn mpi_keyval_create_(
    copy: CopyFn1,
    delete: DeleteFn1,
    keyval: *mut c_int,
    extra: *const c_int,
    ierror: *mut c_int,
) {
    // SAFETY: the Fortran arguments of the call.
    unsafe { create_1(MPI_Keyval_create, copy, delete, keyval, extra, ierror) }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_keyval_create_(
    copy: CopyFn1,
    delete: DeleteFn1,
    keyval: *mut c_int,
    extra: *const c_int,
    ierror: *mut c_int,
) {
    // SAFETY: the Fortran arguments of the call.
    unsafe { create_1(PMPI_Keyval_create, copy, delete, keyval, extra, ierror) }
}

/// The predefined MPI-2 copy procedures: no copy, or a copy of the value.
macro_rules! copy_procedures {
    ($($name:ident, $value:ty, $copies:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            _old: *const c_int,
            _keyval: *const c_int,
            _extra: *const $value,
            value_in: *const $value,
            value_out: *mut $value,
            flag: *mut c_int,
            ierror: *mut c_int,
        ) {
            // SAFETY: called by MPI (through a trampoline) with valid references.
            unsafe {
                if $copies {
                    *value_out = *value_in;
                }
                *flag = $copies as c_int;
                *ierror = 0;
            }
        }
    )*};
}

copy_procedures! {
    mpi_comm_null_copy_fn_, i64, false;
    mpi_comm_dup_fn_, i64, true;
    mpi_type_null_copy_fn_, i64, false;
    mpi_type_dup_fn_, i64, true;
    mpi_win_null_copy_fn_, i64, false;
    mpi_win_dup_fn_, i64, true;
    mpi_null_copy_fn_, c_int, false;
    mpi_dup_fn_, c_int, true;
}

/// The predefined delete procedures: nothing to do.
macro_rules! delete_procedures {
    ($($name:ident, $value:ty;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            _object: *const c_int,
            _keyval: *const c_int,
            _value: *const $value,
            _extra: *const $value,
            ierror: *mut c_int,
        ) {
            // SAFETY: called by MPI (through a trampoline) with valid references.
            unsafe { *ierror = 0 };
        }
    )*};
}

delete_procedures! {
    mpi_comm_null_delete_fn_, i64;
    mpi_type_null_delete_fn_, i64;
    mpi_win_null_delete_fn_, i64;
    mpi_null_delete_fn_, c_int;
}
