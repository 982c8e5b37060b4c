//! The CRaaS C API (include/craas.h) over `mpcrs::craas`: C strings and
//! pointers checked, each error printed on one line naming the call and the
//! rank, and returned as its craas.h code.

#![allow(non_snake_case)]

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_long, c_void};

use mpcrs::craas::{self, codes, CraasError};

fn fail(call: &str, e: &str, code: c_int) -> c_int {
    let rank = mpcrs::current_rank().map_or("-".to_string(), |r| r.to_string());
    mpcrs_settings::report!(error, "mpcrs: {call}: rank {rank}: {e}");
    code
}

fn done(call: &str, r: Result<(), CraasError>) -> c_int {
    match r {
        Ok(()) => codes::SUCCESS,
        Err(e) => fail(call, &e.to_string(), e.code()),
    }
}

/// The text of C string `p` (argument `what`), or the error code.
///
/// # Safety
/// `p` is NULL or NUL-terminated.
unsafe fn text<'a>(call: &str, what: &str, p: *const c_char) -> Result<&'a str, c_int> {
    if p.is_null() {
        return Err(fail(call, &format!("{what} is NULL"), codes::ERR_ARG));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| fail(call, &format!("{what} is not UTF-8"), codes::ERR_NAME))
}

/// The checkpoint's name, once the calling rank is checked to be between
/// MPI_Init and MPI_Finalize; or the error code.
///
/// # Safety
/// `ckpt` is NULL or NUL-terminated.
unsafe fn checkpoint<'a>(call: &str, ckpt: *const c_char) -> Result<&'a str, c_int> {
    let ok = crate::handles::rank_state().is_some_and(|st| st.initialized && !st.finalized);
    if !ok {
        return Err(fail(
            call,
            "called outside MPI_Init ... MPI_Finalize",
            codes::ERR_NOT_RANK,
        ));
    }
    // SAFETY: the caller's contract.
    unsafe { text(call, "the checkpoint", ckpt) }
}

/// The checkpoint's and the object's names.
///
/// # Safety
/// Both are NULL or NUL-terminated.
unsafe fn names<'a>(
    call: &str,
    ckpt: *const c_char,
    name: *const c_char,
) -> Result<(&'a str, &'a str), c_int> {
    // SAFETY: the caller's contract.
    unsafe { Ok((checkpoint(call, ckpt)?, text(call, "the name", name)?)) }
}

/// Refuses NULL `data` with `bytes` (`what`: "data" or "buffer") with the
/// error code.
fn not_null(call: &str, name: &str, what: &str, null: bool, bytes: usize) -> Result<(), c_int> {
    if null && bytes > 0 {
        return Err(fail(
            call,
            &format!("array {name:?}: NULL {what} for {bytes} bytes"),
            codes::ERR_ARG,
        ));
    }
    Ok(())
}

/// # Safety
/// Strings are NULL or NUL-terminated; `data` is NULL or `bytes` readable bytes.
#[no_mangle]
pub unsafe extern "C-unwind" fn CRaaS_Ckpt_array(
    ckpt: *const c_char,
    name: *const c_char,
    data: *const c_void,
    bytes: usize,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    const CALL: &str = "CRaaS_Ckpt_array";
    // SAFETY: see the function's contract.
    let (c, n) = match unsafe { names(CALL, ckpt, name) } {
        Ok(x) => x,
        Err(e) => return e,
    };
    if let Err(e) = not_null(CALL, n, "data", data.is_null(), bytes) {
        return e;
    }
    let data: &[u8] = if bytes == 0 {
        &[]
    } else {
        // SAFETY: `bytes` readable bytes at `data`, not NULL (checked).
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), bytes) }
    };
    done(CALL, craas::ckpt_array(c, n, data))
}

/// # Safety
/// Strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C-unwind" fn CRaaS_Ckpt_index(
    ckpt: *const c_char,
    name: *const c_char,
    value: c_long,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    const CALL: &str = "CRaaS_Ckpt_index";
    // SAFETY: see the function's contract.
    match unsafe { names(CALL, ckpt, name) } {
        Ok((c, n)) => done(CALL, craas::ckpt_index(c, n, value as i64)),
        Err(e) => e,
    }
}

/// # Safety
/// `ckpt` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C-unwind" fn CRaaS_Commit(ckpt: *const c_char) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    const CALL: &str = "CRaaS_Commit";
    // SAFETY: see the function's contract.
    match unsafe { checkpoint(CALL, ckpt) } {
        Ok(c) => done(CALL, craas::commit(c).map(|_| ())),
        Err(e) => e,
    }
}

/// 1 when the rank has a committed `ckpt`, else 0 (an error prints its line).
///
/// # Safety
/// `ckpt` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C-unwind" fn CRaaS_Exists(ckpt: *const c_char) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    const CALL: &str = "CRaaS_Exists";
    // SAFETY: see the function's contract.
    match unsafe { checkpoint(CALL, ckpt) }.map(craas::exists) {
        Ok(Ok(e)) => e as c_int,
        Ok(Err(e)) => {
            fail(CALL, &e.to_string(), e.code());
            0
        }
        Err(_) => 0,
    }
}

/// The index, 0 when the rank has no commit of `ckpt` (an error prints its
/// line and gives 0 too).
///
/// # Safety
/// Strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C-unwind" fn CRaaS_Rst_index(
    ckpt: *const c_char,
    name: *const c_char,
) -> c_long {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    const CALL: &str = "CRaaS_Rst_index";
    // SAFETY: see the function's contract.
    let Ok((ckpt, name)) = (unsafe { names(CALL, ckpt, name) }) else {
        return 0;
    };
    match craas::rst_index(ckpt, name) {
        Ok(v) => v.unwrap_or(0) as c_long,
        Err(e) => {
            fail(CALL, &e.to_string(), e.code());
            0
        }
    }
}

/// # Safety
/// Strings are NULL or NUL-terminated; `data` is NULL or `bytes` writable bytes.
#[no_mangle]
pub unsafe extern "C-unwind" fn CRaaS_Rst_array(
    ckpt: *const c_char,
    name: *const c_char,
    data: *mut c_void,
    bytes: usize,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    const CALL: &str = "CRaaS_Rst_array";
    // SAFETY: see the function's contract.
    let (c, n) = match unsafe { names(CALL, ckpt, name) } {
        Ok(x) => x,
        Err(e) => return e,
    };
    if let Err(e) = not_null(CALL, n, "buffer", data.is_null(), bytes) {
        return e;
    }
    let out: &mut [u8] = if bytes == 0 {
        &mut []
    } else {
        // SAFETY: `bytes` writable bytes at `data`, not NULL (checked), the
        // caller's alone during the call.
        unsafe { std::slice::from_raw_parts_mut(data.cast::<u8>(), bytes) }
    };
    done(CALL, craas::rst_array(c, n, out))
}

/// # Safety
/// `ckpt` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C-unwind" fn CRaaS_Delete(ckpt: *const c_char) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    const CALL: &str = "CRaaS_Delete";
    // SAFETY: see the function's contract.
    match unsafe { checkpoint(CALL, ckpt) } {
        Ok(c) => done(CALL, craas::delete(c)),
        Err(e) => e,
    }
}

/// Waits until the last commit of `ckpt` is held where it is kept (an mpcrs
/// extension; craas.h).
///
/// # Safety
/// `ckpt` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C-unwind" fn CRaaSX_Wait(ckpt: *const c_char) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    const CALL: &str = "CRaaSX_Wait";
    // SAFETY: see the function's contract.
    match unsafe { checkpoint(CALL, ckpt) } {
        Ok(c) => done(CALL, craas::wait(c)),
        Err(e) => e,
    }
}
