//! Error classes, codes and strings the program adds, and MPI-1's names of the
//! communicator error-handler calls.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use mpcrs::ErrorClass;

use crate::export::{mpi_fn, tri};
use crate::handles::*;

/// Added classes and codes start above MPI_ERR_LASTCODE.
const FIRST_USER_CODE: c_int = 0x4000_0000;

/// The class and string of a code the program added.
pub(crate) fn user_error(code: c_int) -> Option<(c_int, String)> {
    let i = usize::try_from(code.checked_sub(FIRST_USER_CODE)?).ok()?;
    rank_state()?.user_errors.get(i).cloned().flatten()
}

/// A new code of `class` (a new class: `None`), in the first free slot.
fn add(class: Option<c_int>) -> Option<c_int> {
    let mut st = rank_state()?;
    let i = match st.user_errors.iter().position(|e| e.is_none()) {
        Some(i) => i,
        None => {
            st.user_errors.push(None);
            st.user_errors.len() - 1
        }
    };
    let code = FIRST_USER_CODE + i as c_int;
    // A new class is its own class.
    st.user_errors[i] = Some((class.unwrap_or(code), String::new()));
    Some(code)
}

/// The largest code in use, or MPI_ERR_LASTCODE (MPI_LASTUSEDCODE).
pub(crate) fn last_used_code() -> c_int {
    rank_state().map_or(0x3fff_ffff, |st| {
        let used = st.user_errors.iter().rposition(|e| e.is_some());
        used.map_or(0x3fff_ffff, |i| FIRST_USER_CODE + i as c_int)
    })
}

fn arg_error(call: &'static str, detail: String) -> c_int {
    match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(&w, call, ErrorClass::Arg, detail),
        Err(code) => code,
    }
}

mpi_fn! {
    fn Add_error_class(errorclass: *mut c_int) -> c_int {
        let Some(c) = add(None) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *errorclass = c };
        MPI_SUCCESS
    }

    fn Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
        let known = ErrorClass::from_code(errorclass).is_some()
            || user_error(errorclass).is_some_and(|(c, _)| c == errorclass);
        if !known {
            return arg_error("MPI_Add_error_code", format!("{errorclass} is not an error class"));
        }
        let Some(c) = add(Some(errorclass)) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *errorcode = c };
        MPI_SUCCESS
    }

    fn Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
        // SAFETY: a NUL-terminated string by contract.
        let text = unsafe { CStr::from_ptr(string) }.to_string_lossy().into_owned();
        let i = usize::try_from(errorcode - FIRST_USER_CODE).ok();
        let mut st = tri!(rank_state().ok_or(ErrorClass::Other as c_int));
        match i.and_then(|i| st.user_errors.get_mut(i)).and_then(|e| e.as_mut()) {
            Some(e) => {
                e.1 = text;
                MPI_SUCCESS
            }
            None => {
                drop(st);
                arg_error("MPI_Add_error_string", format!("{errorcode} is not a code added by the program"))
            }
        }
    }

    fn Errhandler_set(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { crate::env::PMPI_Comm_set_errhandler(comm, errhandler) }
    }

    fn Errhandler_get(comm: MPI_Comm, errhandler: *mut MPI_Errhandler) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { crate::env::PMPI_Comm_get_errhandler(comm, errhandler) }
    }
}

/// Removes the entry of code `code` if `ok` accepts it; why not otherwise.
fn remove(code: c_int, ok: impl Fn(&RankState, c_int) -> Result<(), String>) -> Result<(), String> {
    let mut st = rank_state().ok_or("outside an MPI rank")?;
    let i = usize::try_from(code - FIRST_USER_CODE)
        .ok()
        .filter(|&i| st.user_errors.get(i).is_some_and(|e| e.is_some()))
        .ok_or_else(|| format!("{code} is not a class or code the program added"))?;
    ok(&st, st.user_errors[i].as_ref().expect("checked").0)?;
    st.user_errors[i] = None;
    Ok(())
}

/// MPI-4.1's MPI_Remove_error_class, _code and _string (and MPICH's
/// earlier names of them, MPIX_Delete_error_*) take back what
/// MPI_Add_error_class, _code and _string added: a class once its codes are
/// gone, a code, a string. They fail through MPI_COMM_WORLD's handler with
/// MPI_ERR_ARG when there is nothing to remove.
fn remove_class(call: &'static str, errorclass: c_int) -> c_int {
    let r = remove(errorclass, |st, class| {
        if class != errorclass {
            return Err(format!("{errorclass} is an error code, not a class"));
        }
        let codes = st
            .user_errors
            .iter()
            .enumerate()
            .filter(|(i, e)| {
                FIRST_USER_CODE + *i as c_int != errorclass
                    && e.as_ref().is_some_and(|(c, _)| *c == errorclass)
            })
            .count();
        if codes > 0 {
            return Err(format!("error class {errorclass} still has {codes} codes"));
        }
        Ok(())
    });
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(why) => arg_error(call, why),
    }
}

/// See [`remove_class`].
fn remove_code(call: &'static str, errorcode: c_int) -> c_int {
    let r = remove(errorcode, |_, class| {
        if class == errorcode {
            return Err(format!("{errorcode} is an error class, not a code"));
        }
        Ok(())
    });
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(why) => arg_error(call, why),
    }
}

/// See [`remove_class`].
fn remove_string(call: &'static str, errorcode: c_int) -> c_int {
    let cleared = rank_state().is_some_and(|mut st| {
        let i = usize::try_from(errorcode - FIRST_USER_CODE).ok();
        match i
            .and_then(|i| st.user_errors.get_mut(i))
            .and_then(|e| e.as_mut())
        {
            Some(e) => {
                e.1.clear();
                true
            }
            None => false,
        }
    });
    if cleared {
        MPI_SUCCESS
    } else {
        arg_error(call, format!("{errorcode} is not a code the program added"))
    }
}

mpi_fn! {
    fn Remove_error_class(errorclass: c_int) -> c_int {
        remove_class("MPI_Remove_error_class", errorclass)
    }

    fn Remove_error_code(errorcode: c_int) -> c_int {
        remove_code("MPI_Remove_error_code", errorcode)
    }

    fn Remove_error_string(errorcode: c_int) -> c_int {
        remove_string("MPI_Remove_error_string", errorcode)
    }
}

/// MPICH's name of MPI_Remove_error_class.
#[no_mangle]
pub extern "C-unwind" fn MPIX_Delete_error_class(errorclass: c_int) -> c_int {
    remove_class("MPIX_Delete_error_class", errorclass)
}

/// MPICH's name of MPI_Remove_error_code.
#[no_mangle]
pub extern "C-unwind" fn MPIX_Delete_error_code(errorcode: c_int) -> c_int {
    remove_code("MPIX_Delete_error_code", errorcode)
}

/// MPICH's name of MPI_Remove_error_string.
#[no_mangle]
pub extern "C-unwind" fn MPIX_Delete_error_string(errorcode: c_int) -> c_int {
    remove_string("MPIX_Delete_error_string", errorcode)
}
