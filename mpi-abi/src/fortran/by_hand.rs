//! The Fortran bindings whose form differs from C's beyond argument passing
//! (build/fortran.rs's HAND_WRITTEN list): MPI_INIT has no argc/argv,
//! MPI_WTIME and the MPI_AINT_ functions return values, and attribute values
//! are INTEGERs in Fortran where C has pointers.

use std::os::raw::{c_char, c_int, c_void};

use super::set_ierror;
use super::strings::{InString, OutString};
use crate::attributes::{self, Kind};
use crate::comm::{
    MPI_APPNUM, MPI_HOST, MPI_IO, MPI_LASTUSEDCODE, MPI_TAG_UB, MPI_UNIVERSE_SIZE,
    MPI_WTIME_IS_GLOBAL,
};
use crate::windows::{
    MPI_WIN_BASE, MPI_WIN_CREATE_FLAVOR, MPI_WIN_DISP_UNIT, MPI_WIN_MODEL, MPI_WIN_SIZE,
};

extern "C" {
    fn MPI_Init(argc: *mut c_int, argv: *mut c_void) -> c_int;
    fn PMPI_Init(argc: *mut c_int, argv: *mut c_void) -> c_int;
    fn MPI_Init_thread(argc: *mut c_int, argv: *mut c_void, req: c_int, prov: *mut c_int) -> c_int;
    fn PMPI_Init_thread(argc: *mut c_int, argv: *mut c_void, req: c_int, prov: *mut c_int)
        -> c_int;
    fn MPI_Wtime() -> f64;
    fn PMPI_Wtime() -> f64;
    fn MPI_Wtick() -> f64;
    fn PMPI_Wtick() -> f64;
    fn MPI_Pcontrol(level: c_int, ...) -> c_int;
    fn PMPI_Pcontrol(level: c_int, ...) -> c_int;
    fn MPI_Buffer_detach(addr: *mut c_void, size: *mut c_int) -> c_int;
    fn PMPI_Buffer_detach(addr: *mut c_void, size: *mut c_int) -> c_int;
    fn MPI_Info_create_env(argc: c_int, argv: *mut c_void, info: *mut c_int) -> c_int;
    fn PMPI_Info_create_env(argc: c_int, argv: *mut c_void, info: *mut c_int) -> c_int;
    fn MPI_Info_get_string(
        info: c_int,
        key: *const c_char,
        buflen: *mut c_int,
        value: *mut c_char,
        flag: *mut c_int,
    ) -> c_int;
    fn PMPI_Info_get_string(
        info: c_int,
        key: *const c_char,
        buflen: *mut c_int,
        value: *mut c_char,
        flag: *mut c_int,
    ) -> c_int;
}

/// How a predefined attribute's C value (a pointer) reads as a Fortran INTEGER.
enum Predefined {
    /// A pointer to an int (MPI_TAG_UB, MPI_WIN_DISP_UNIT, ...).
    Int,
    /// A pointer to an MPI_Aint (MPI_WIN_SIZE).
    Aint,
    /// The pointer itself is the value (MPI_WIN_BASE).
    Address,
}

fn predefined(keyval: c_int) -> Option<Predefined> {
    match keyval {
        MPI_TAG_UB
        | MPI_HOST
        | MPI_IO
        | MPI_WTIME_IS_GLOBAL
        | MPI_UNIVERSE_SIZE
        | MPI_LASTUSEDCODE
        | MPI_APPNUM
        | MPI_WIN_DISP_UNIT
        | MPI_WIN_CREATE_FLAVOR
        | MPI_WIN_MODEL => Some(Predefined::Int),
        MPI_WIN_SIZE => Some(Predefined::Aint),
        MPI_WIN_BASE => Some(Predefined::Address),
        _ => None,
    }
}

/// The Fortran value of attribute `keyval` of object `obj` whose C value is
/// `c_value`: a predefined one is read through its pointer; a user's as
/// Fortran sees it (the attribute store knows who set it).
///
/// # Safety
/// `c_value` is what MPI_*_get_attr returned for `keyval` with the flag set.
unsafe fn fortran_value(kind: Kind, obj: c_int, keyval: c_int, c_value: *mut c_void) -> i64 {
    match predefined(keyval) {
        // SAFETY: predefined integer attributes point to an int the library keeps.
        Some(Predefined::Int) => unsafe { *(c_value as *const c_int) as i64 },
        // SAFETY: MPI_WIN_SIZE points to an MPI_Aint the library keeps.
        Some(Predefined::Aint) => unsafe { *(c_value as *const i64) },
        Some(Predefined::Address) => c_value as i64,
        None => attributes::fortran_value(kind, obj, keyval).unwrap_or(c_value as i64),
    }
}

both! {
    fn mpi_init_ / pmpi_init_(ierror: *mut c_int) calls call = MPI_Init / PMPI_Init {
        set_ierror(ierror, call(std::ptr::null_mut(), std::ptr::null_mut()))
    }

    fn mpi_init_thread_ / pmpi_init_thread_(required: *const c_int, provided: *mut c_int, ierror: *mut c_int)
        calls call = MPI_Init_thread / PMPI_Init_thread {
        set_ierror(ierror, call(std::ptr::null_mut(), std::ptr::null_mut(), *required, provided))
    }

    fn mpi_wtime_ / pmpi_wtime_() calls call = MPI_Wtime / PMPI_Wtime -> f64 {
        call()
    }

    fn mpi_wtick_ / pmpi_wtick_() calls call = MPI_Wtick / PMPI_Wtick -> f64 {
        call()
    }

    fn mpi_pcontrol_ / pmpi_pcontrol_(level: *const c_int, ierror: *mut c_int)
        calls call = MPI_Pcontrol / PMPI_Pcontrol {
        set_ierror(ierror, call(*level))
    }

    // Fortran has no use for the buffer's address (it names the buffer it
    // attached): C writes it into a place of our own, not into the argument.
    fn mpi_buffer_detach_ / pmpi_buffer_detach_(_buffer: *mut c_void, size: *mut c_int, ierror: *mut c_int)
        calls call = MPI_Buffer_detach / PMPI_Buffer_detach {
        let mut addr: *mut c_void = std::ptr::null_mut();
        set_ierror(ierror, call((&mut addr as *mut *mut c_void).cast(), size))
    }
}

both! {
    // Fortran's form has no argc/argv: the environment is the process's.
    fn mpi_info_create_env_ / pmpi_info_create_env_(info: *mut c_int, ierror: *mut c_int)
        calls call = MPI_Info_create_env / PMPI_Info_create_env {
        set_ierror(ierror, call(0, std::ptr::null_mut(), info))
    }

    // Fortran's buflen is the value's length without C's terminating NUL, in
    // and out: the value is cut to the buflen given (0: not written), and
    // buflen comes back as the whole value's length.
    fn mpi_info_get_string_ / pmpi_info_get_string_(
        info: *const c_int,
        key: *const c_char,
        buflen: *mut c_int,
        value: *mut c_char,
        flag: *mut c_int,
        ierror: *mut c_int,
        key_len: usize,
        value_len: usize
    ) calls call = MPI_Info_get_string / PMPI_Info_get_string {
        let key_c = InString::info(key, key_len);
        let wanted = (*buflen).max(0) as usize;
        let mut room = OutString::new(value, wanted.min(value_len));
        let mut c_buflen = c_int::try_from(wanted + 1).unwrap_or(c_int::MAX);
        let rc = call(*info, key_c.as_ptr(), &mut c_buflen, room.as_mut_ptr(), flag);
        if rc == 0 && *flag != 0 {
            *buflen = c_buflen - 1;
            if wanted > 0 {
                room.write_back();
                // The rest of the variable is blank too.
                if value_len > wanted {
                    std::ptr::write_bytes(value.cast::<u8>().add(wanted), b' ', value_len - wanted);
                }
            }
        }
        set_ierror(ierror, rc)
    }
}

/// MPI_AINT_ADD / MPI_AINT_DIFF: address arithmetic, as C's (no C call to
/// profile: both names run the same sum).
fn aint_add(base: i64, disp: i64) -> i64 {
    base.wrapping_add(disp)
}

fn aint_diff(a: i64, b: i64) -> i64 {
    a.wrapping_sub(b)
}

both! {
    fn mpi_aint_add_ / pmpi_aint_add_(base: *const i64, disp: *const i64)
        calls call = aint_add / aint_add -> i64 {
        call(*base, *disp)
    }

    fn mpi_aint_diff_ / pmpi_aint_diff_(a: *const i64, b: *const i64)
        calls call = aint_diff / aint_diff -> i64 {
        call(*a, *b)
    }
}

/// The attribute calls of one kind of object (communicator, datatype, window):
/// get and set with INTEGER(KIND=MPI_ADDRESS_KIND) values.
macro_rules! attributes {
    ($($kind:expr, $get:ident / $pget:ident, $set:ident / $pset:ident => $cget:ident / $pcget:ident, $cset:ident / $pcset:ident;)*) => {
        extern "C" {
            $(
                fn $cget(obj: c_int, keyval: c_int, value: *mut c_void, flag: *mut c_int) -> c_int;
                fn $pcget(obj: c_int, keyval: c_int, value: *mut c_void, flag: *mut c_int) -> c_int;
                fn $cset(obj: c_int, keyval: c_int, value: *mut c_void) -> c_int;
                fn $pcset(obj: c_int, keyval: c_int, value: *mut c_void) -> c_int;
            )*
        }
        both! {
            $(
                fn $get / $pget(obj: *const c_int, keyval: *const c_int, value: *mut i64, flag: *mut c_int, ierror: *mut c_int)
                    calls call = $cget / $pcget {
                    let mut c_value: *mut c_void = std::ptr::null_mut();
                    let rc = call(*obj, *keyval, (&mut c_value as *mut *mut c_void).cast(), flag);
                    if rc == 0 && *flag != 0 {
                        *value = fortran_value($kind, *obj, *keyval, c_value);
                    }
                    set_ierror(ierror, rc)
                }

                fn $set / $pset(obj: *const c_int, keyval: *const c_int, value: *const i64, ierror: *mut c_int)
                    calls call = $cset / $pcset {
                    let rc = attributes::set_from_fortran(|| call(*obj, *keyval, *value as *mut c_void));
                    set_ierror(ierror, rc)
                }
            )*
        }
    };
}

attributes! {
    Kind::Comm, mpi_comm_get_attr_ / pmpi_comm_get_attr_, mpi_comm_set_attr_ / pmpi_comm_set_attr_
        => MPI_Comm_get_attr / PMPI_Comm_get_attr, MPI_Comm_set_attr / PMPI_Comm_set_attr;
    Kind::Type, mpi_type_get_attr_ / pmpi_type_get_attr_, mpi_type_set_attr_ / pmpi_type_set_attr_
        => MPI_Type_get_attr / PMPI_Type_get_attr, MPI_Type_set_attr / PMPI_Type_set_attr;
    Kind::Win, mpi_win_get_attr_ / pmpi_win_get_attr_, mpi_win_set_attr_ / pmpi_win_set_attr_
        => MPI_Win_get_attr / PMPI_Win_get_attr, MPI_Win_set_attr / PMPI_Win_set_attr;
}

extern "C" {
    fn MPI_Attr_get(comm: c_int, keyval: c_int, value: *mut c_void, flag: *mut c_int) -> c_int;
    fn PMPI_Attr_get(comm: c_int, keyval: c_int, value: *mut c_void, flag: *mut c_int) -> c_int;
    fn MPI_Attr_put(comm: c_int, keyval: c_int, value: *mut c_void) -> c_int;
    fn PMPI_Attr_put(comm: c_int, keyval: c_int, value: *mut c_void) -> c_int;
}

// MPI-1's forms: the value is a default INTEGER.
both! {
    fn mpi_attr_get_ / pmpi_attr_get_(comm: *const c_int, keyval: *const c_int, value: *mut c_int, flag: *mut c_int, ierror: *mut c_int)
        calls call = MPI_Attr_get / PMPI_Attr_get {
        let mut c_value: *mut c_void = std::ptr::null_mut();
        let rc = call(*comm, *keyval, (&mut c_value as *mut *mut c_void).cast(), flag);
        if rc == 0 && *flag != 0 {
            *value = fortran_value(Kind::Comm, *comm, *keyval, c_value) as c_int;
        }
        set_ierror(ierror, rc)
    }

    fn mpi_attr_put_ / pmpi_attr_put_(comm: *const c_int, keyval: *const c_int, value: *const c_int, ierror: *mut c_int)
        calls call = MPI_Attr_put / PMPI_Attr_put {
        let rc = attributes::set_from_fortran(|| call(*comm, *keyval, *value as isize as *mut c_void));
        set_ierror(ierror, rc)
    }
}

/// MPI_FILE_CREATE_ERRHANDLER(function, errhandler, ierror): the procedure
/// takes the file's Fortran handle, not C's MPI_File pointer.
///
/// # Safety
/// The Fortran arguments of that call.
unsafe fn file_create_errhandler(
    function: Option<crate::ctypes::CommErrhandlerFn>,
    errhandler: *mut c_int,
    ierror: *mut c_int,
) {
    let f = function.map(crate::errhandler::Function::FortranFile);
    let rc = crate::errhandler::create_as("MPI_File_create_errhandler", f, errhandler);
    // SAFETY: `ierror` is the Fortran INTEGER.
    unsafe { set_ierror(ierror, rc) };
}

#[no_mangle]
pub unsafe extern "C" fn mpi_file_create_errhandler_(
    function: Option<crate::ctypes::CommErrhandlerFn>,
    errhandler: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: the Fortran arguments of the call.
    unsafe { file_create_errhandler(function, errhandler, ierror) }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_file_create_errhandler_(
    function: Option<crate::ctypes::CommErrhandlerFn>,
    errhandler: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: the Fortran arguments of the call.
    unsafe { file_create_errhandler(function, errhandler, ierror) }
}
