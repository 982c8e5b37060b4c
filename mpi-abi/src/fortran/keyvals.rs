//! Keyvals made from Fortran: the copy and delete procedures have Fortran
//! interfaces (every argument by reference, attribute values as INTEGERs,
//! `ierror` instead of a result), so the C keyval gets trampolines that call
//! them, with the procedures and the Fortran extra state behind its
//! `extra_state`. The keyval is marked Fortran's, so the attribute store
//! hands its callbacks values as Fortran sees them (attributes.rs).
//!
//! Also the predefined procedures of mpif.h (MPI_COMM_NULL_COPY_FN,
//! MPI_COMM_DUP_FN, ... and MPI-1's MPI_NULL_COPY_FN, MPI_DUP_FN,
//! MPI_NULL_DELETE_FN), as Fortran procedures.
//!
//! The box behind a keyval's extra state lives as long as the process: MPI may
//! still call the procedures after MPI_*_free_keyval, for the attributes
//! objects keep.

use std::os::raw::{c_int, c_void};

use super::set_ierror;

/// The INTEGER kind a keyval's procedures take values and extra state in:
/// MPI_ADDRESS_KIND for MPI-2's keyvals, default INTEGER for MPI-1's.
trait Value: Copy + Default {
    /// A value as C carries it (in a pointer's bits: Fortran's values are
    /// kept that way, see attributes.rs).
    fn from_bits(p: *mut c_void) -> Self;
    fn to_bits(self) -> *mut c_void;
}

impl Value for i64 {
    fn from_bits(p: *mut c_void) -> i64 {
        p as i64
    }
    fn to_bits(self) -> *mut c_void {
        self as *mut c_void
    }
}

impl Value for c_int {
    fn from_bits(p: *mut c_void) -> c_int {
        p as i64 as c_int
    }
    fn to_bits(self) -> *mut c_void {
        self as isize as *mut c_void
    }
}

/// A copy procedure: (old, keyval, extra_state, value_in, value_out, flag, ierror).
type CopyFn<V> = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *const V,
    *const V,
    *mut V,
    *mut c_int,
    *mut c_int,
);
/// A delete procedure: (object, keyval, value, extra_state, ierror).
type DeleteFn<V> = unsafe extern "C" fn(*const c_int, *const c_int, *const V, *const V, *mut c_int);

/// What a keyval made from Fortran keeps behind its C extra state.
struct Procedures<V> {
    copy: CopyFn<V>,
    delete: DeleteFn<V>,
    extra: V,
}

/// C's copy callback of a keyval made from Fortran.
unsafe extern "C" fn copy_trampoline<V: Value>(
    old: c_int,
    keyval: c_int,
    extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: `extra` is the box `create` made for the keyval (never freed);
    // `value_out` points to the attribute's new value and `flag` to an int (MPI's contract).
    unsafe {
        let p = &*(extra as *const Procedures<V>);
        let (input, mut output, mut ierror) = (V::from_bits(value_in), V::default(), 0);
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
        *(value_out as *mut *mut c_void) = output.to_bits();
        ierror
    }
}

/// C's delete callback of a keyval made from Fortran.
unsafe extern "C" fn delete_trampoline<V: Value>(
    object: c_int,
    keyval: c_int,
    value: *mut c_void,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: as copy_trampoline.
    unsafe {
        let p = &*(extra as *const Procedures<V>);
        let (value, mut ierror) = (V::from_bits(value), 0);
        (p.delete)(&object, &keyval, &value, &p.extra, &mut ierror);
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

/// MPI_{COMM,TYPE,WIN}_CREATE_KEYVAL and MPI_KEYVAL_CREATE(copy, delete,
/// keyval, extra_state, ierror): a C keyval whose callbacks are the
/// trampolines, with the procedures behind its extra state, marked Fortran's.
///
/// # Safety
/// The Fortran arguments of those calls.
unsafe fn create<V: Value>(
    c_create: CCreate,
    copy: CopyFn<V>,
    delete: DeleteFn<V>,
    keyval: *mut c_int,
    extra: *const V,
    ierror: *mut c_int,
) {
    // SAFETY: `extra` is the INTEGER of kind V by reference.
    let extra = unsafe { *extra };
    let procedures = Box::into_raw(Box::new(Procedures {
        copy,
        delete,
        extra,
    }));
    // SAFETY: trampolines of C's signatures, reading the box as Procedures<V>.
    let rc = unsafe {
        c_create(
            copy_trampoline::<V>,
            delete_trampoline::<V>,
            keyval,
            procedures.cast(),
        )
    };
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

/// The MPI-2 create calls of the three kinds of keyval.
macro_rules! create_keyval {
    ($($name:ident / $pname:ident => $c:ident / $pc:ident;)*) => {
        both! {$(
            fn $name / $pname(
                copy: CopyFn<i64>,
                delete: DeleteFn<i64>,
                keyval: *mut c_int,
                extra: *const i64,
                ierror: *mut c_int
            ) calls call = $c / $pc {
                create(call, copy, delete, keyval, extra, ierror)
            }
        )*}
    };
}

create_keyval! {
    mpi_comm_create_keyval_ / pmpi_comm_create_keyval_ => MPI_Comm_create_keyval / PMPI_Comm_create_keyval;
    mpi_type_create_keyval_ / pmpi_type_create_keyval_ => MPI_Type_create_keyval / PMPI_Type_create_keyval;
    mpi_win_create_keyval_ / pmpi_win_create_keyval_ => MPI_Win_create_keyval / PMPI_Win_create_keyval;
}

both! {
    fn mpi_keyval_create_ / pmpi_keyval_create_(
        copy: CopyFn<c_int>,
        delete: DeleteFn<c_int>,
        keyval: *mut c_int,
        extra: *const c_int,
        ierror: *mut c_int
    ) calls call = MPI_Keyval_create / PMPI_Keyval_create {
        create(call, copy, delete, keyval, extra, ierror)
    }
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
