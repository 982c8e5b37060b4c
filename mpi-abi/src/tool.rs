//! The tool information interface (MPI_T, MPI-3.1 chapter 14) of a library
//! that exposes no control variables, no performance variables and no
//! categories: a tool can initialize it (before MPI_Init too, from any
//! thread), learn that there is nothing to read, open and close performance
//! sessions, and finalize it. Every query of an index, name or handle then
//! gets the MPI_T error that says it does not exist.
//!
//! MPI_T functions return their error codes; they never call error handlers.

use std::collections::{HashMap, HashSet};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

use crate::ctypes::*;
use crate::export::mpi_fn;
use crate::handles::*;

const MPI_T_ERR_NOT_INITIALIZED: c_int = 60;
const MPI_T_ERR_INVALID_INDEX: c_int = 62;
const MPI_T_ERR_INVALID_HANDLE: c_int = 64;
const MPI_T_ERR_INVALID_SESSION: c_int = 67;
const MPI_T_ERR_INVALID_NAME: c_int = 73;

/// How many times each rank initialized the interface and did not finalize
/// it yet (the interface is per MPI process: per rank here). Held only for a
/// lookup, never across a switch.
static INITIALIZED: Mutex<Option<HashMap<i32, u32>>> = Mutex::new(None);

/// Open performance-variable sessions, by address.
static SESSIONS: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn me() -> i32 {
    mpcrs::current_rank().unwrap_or(-1)
}

fn initialized() -> bool {
    let t = INITIALIZED.lock().expect("MPI_T table");
    t.as_ref()
        .and_then(|m| m.get(&me()))
        .is_some_and(|&n| n > 0)
}

/// `Err(MPI_T_ERR_NOT_INITIALIZED)` outside MPI_T_init_thread/MPI_T_finalize.
fn live() -> Result<(), c_int> {
    if initialized() {
        Ok(())
    } else {
        Err(MPI_T_ERR_NOT_INITIALIZED)
    }
}

/// `live()`, then the error every query of a variable or category gets.
fn none_exists(err: c_int) -> c_int {
    match live() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// Writes 0 to a count the program asked for.
///
/// # Safety
/// `p` is writable.
unsafe fn zero(p: *mut c_int) -> c_int {
    if let Err(e) = live() {
        return e;
    }
    // SAFETY: by contract.
    unsafe { *p = 0 };
    MPI_SUCCESS
}

mpi_fn! {
    fn T_init_thread(required: c_int, provided: *mut c_int) -> c_int {
        let mut t = INITIALIZED.lock().expect("MPI_T table");
        *t.get_or_insert_with(HashMap::new).entry(me()).or_insert(0) += 1;
        // Every thread level is provided, as by MPI_Init_thread.
        // SAFETY: writable by contract.
        unsafe { *provided = required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE) };
        MPI_SUCCESS
    }

    fn T_finalize() -> c_int {
        let mut t = INITIALIZED.lock().expect("MPI_T table");
        match t.as_mut().and_then(|m| m.get_mut(&me())) {
            Some(n) if *n > 0 => {
                *n -= 1;
                MPI_SUCCESS
            }
            _ => MPI_T_ERR_NOT_INITIALIZED,
        }
    }

    fn T_cvar_get_num(num_cvar: *mut c_int) -> c_int {
        // SAFETY: writable by contract.
        unsafe { zero(num_cvar) }
    }

    fn T_pvar_get_num(num_pvar: *mut c_int) -> c_int {
        // SAFETY: writable by contract.
        unsafe { zero(num_pvar) }
    }

    fn T_category_get_num(num_cat: *mut c_int) -> c_int {
        // SAFETY: writable by contract.
        unsafe { zero(num_cat) }
    }

    fn T_category_changed(update_number: *mut c_int) -> c_int {
        // The (empty) set of categories never changes.
        // SAFETY: writable by contract.
        unsafe { zero(update_number) }
    }

    fn T_cvar_get_info(_cvar_index: c_int, _name: *mut c_char, _name_len: *mut c_int, _verbosity: *mut c_int, _datatype: *mut MPI_Datatype, _enumtype: *mut MPI_T_enum, _desc: *mut c_char, _desc_len: *mut c_int, _bind: *mut c_int, _scope: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_INDEX)
    }

    fn T_cvar_get_index(_name: *const c_char, _cvar_index: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_NAME)
    }

    fn T_cvar_handle_alloc(_cvar_index: c_int, _obj_handle: *mut c_void, _handle: *mut MPI_T_cvar_handle, _count: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_INDEX)
    }

    fn T_cvar_handle_free(_handle: *mut MPI_T_cvar_handle) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_cvar_read(_handle: MPI_T_cvar_handle, _buf: *mut c_void) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_cvar_write(_handle: MPI_T_cvar_handle, _buf: *const c_void) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_enum_get_info(_enumtype: MPI_T_enum, _num: *mut c_int, _name: *mut c_char, _name_len: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_enum_get_item(_enumtype: MPI_T_enum, _indx: c_int, _value: *mut c_int, _name: *mut c_char, _name_len: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_pvar_get_info(_pvar_index: c_int, _name: *mut c_char, _name_len: *mut c_int, _verbosity: *mut c_int, _var_class: *mut c_int, _datatype: *mut MPI_Datatype, _enumtype: *mut MPI_T_enum, _desc: *mut c_char, _desc_len: *mut c_int, _bind: *mut c_int, _readonly: *mut c_int, _continuous: *mut c_int, _atomic: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_INDEX)
    }

    fn T_pvar_get_index(_name: *const c_char, _var_class: c_int, _pvar_index: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_NAME)
    }

    fn T_category_get_info(_cat_index: c_int, _name: *mut c_char, _name_len: *mut c_int, _desc: *mut c_char, _desc_len: *mut c_int, _num_cvars: *mut c_int, _num_pvars: *mut c_int, _num_categories: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_INDEX)
    }

    fn T_category_get_index(_name: *const c_char, _cat_index: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_NAME)
    }

    fn T_category_get_cvars(_cat_index: c_int, _len: c_int, _indices: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_INDEX)
    }

    fn T_category_get_pvars(_cat_index: c_int, _len: c_int, _indices: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_INDEX)
    }

    fn T_category_get_categories(_cat_index: c_int, _len: c_int, _indices: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_INDEX)
    }

    fn T_pvar_session_create(session: *mut MPI_T_pvar_session) -> c_int {
        if let Err(e) = live() {
            return e;
        }
        // A session holds nothing (there are no variables to bind): its
        // handle is a distinct address, known until it is freed.
        let s = Box::into_raw(Box::new(0u8)) as usize;
        SESSIONS.lock().expect("MPI_T sessions").get_or_insert_with(HashSet::new).insert(s);
        // SAFETY: writable by contract.
        unsafe { *session = s as MPI_T_pvar_session };
        MPI_SUCCESS
    }

    fn T_pvar_session_free(session: *mut MPI_T_pvar_session) -> c_int {
        if let Err(e) = live() {
            return e;
        }
        // SAFETY: readable by contract.
        let s = unsafe { *session } as usize;
        let known = SESSIONS.lock().expect("MPI_T sessions").as_mut().is_some_and(|set| set.remove(&s));
        if !known {
            return MPI_T_ERR_INVALID_SESSION;
        }
        // SAFETY: made by Box::into_raw in MPI_T_pvar_session_create, freed once.
        drop(unsafe { Box::from_raw(s as *mut u8) });
        // SAFETY: writable by contract.
        unsafe { *session = std::ptr::null_mut() };
        MPI_SUCCESS
    }

    fn T_pvar_handle_alloc(_session: MPI_T_pvar_session, _pvar_index: c_int, _obj_handle: *mut c_void, _handle: *mut MPI_T_pvar_handle, _count: *mut c_int) -> c_int {
        none_exists(MPI_T_ERR_INVALID_INDEX)
    }

    fn T_pvar_handle_free(_session: MPI_T_pvar_session, _handle: *mut MPI_T_pvar_handle) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_pvar_start(_session: MPI_T_pvar_session, _handle: MPI_T_pvar_handle) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_pvar_stop(_session: MPI_T_pvar_session, _handle: MPI_T_pvar_handle) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_pvar_read(_session: MPI_T_pvar_session, _handle: MPI_T_pvar_handle, _buf: *mut c_void) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_pvar_readreset(_session: MPI_T_pvar_session, _handle: MPI_T_pvar_handle, _buf: *mut c_void) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_pvar_reset(_session: MPI_T_pvar_session, _handle: MPI_T_pvar_handle) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }

    fn T_pvar_write(_session: MPI_T_pvar_session, _handle: MPI_T_pvar_handle, _buf: *const c_void) -> c_int {
        none_exists(MPI_T_ERR_INVALID_HANDLE)
    }
}
