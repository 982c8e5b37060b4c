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
    rank_state()?.user_errors.get(i).cloned()
}

fn add(class: Option<c_int>) -> Option<c_int> {
    let mut st = rank_state()?;
    let code = FIRST_USER_CODE + st.user_errors.len() as c_int;
    // A new class is its own class.
    st.user_errors.push((class.unwrap_or(code), String::new()));
    Some(code)
}

/// The largest code added so far, or MPI_ERR_LASTCODE (MPI_LASTUSEDCODE).
pub(crate) fn last_used_code() -> c_int {
    rank_state().map_or(0x3fff_ffff, |st| {
        FIRST_USER_CODE + st.user_errors.len() as c_int - 1
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
        match i.and_then(|i| st.user_errors.get_mut(i)) {
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
