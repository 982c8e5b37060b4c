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

/// Whether the calling rank is between MPI_Init and MPI_Finalize, else the
/// error code.
fn started(call: &str) -> Result<(), c_int> {
    let ok = crate::handles::rank_state().is_some_and(|st| st.initialized && !st.finalized);
    if ok {
        Ok(())
    } else {
        Err(fail(
            call,
            "called outside MPI_Init ... MPI_Finalize",
            codes::ERR_NOT_RANK,
        ))
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

/// # Safety
/// Strings are NULL or NUL-terminated; `data` is NULL or `bytes` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn CRaaS_Ckpt_array(
    ckpt: *const c_char,
    name: *const c_char,
    data: *const c_void,
    bytes: usize,
) -> c_int {
    const CALL: &str = "CRaaS_Ckpt_array";
    if let Err(e) = started(CALL) {
        return e;
    }
    // SAFETY: see the function's contract.
    let (ckpt, name) = match unsafe {
        (
            text(CALL, "the checkpoint", ckpt),
            text(CALL, "the name", name),
        )
    } {
        (Ok(c), Ok(n)) => (c, n),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    if data.is_null() && bytes > 0 {
        return fail(
            CALL,
            &format!("array {name:?}: NULL data for {bytes} bytes"),
            codes::ERR_ARG,
        );
    }
    let data: &[u8] = if bytes == 0 {
        &[]
    } else {
        // SAFETY: `bytes` readable bytes at `data` (the caller's contract).
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), bytes) }
    };
    done(CALL, craas::ckpt_array(ckpt, name, data))
}

/// # Safety
/// Strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn CRaaS_Ckpt_index(
    ckpt: *const c_char,
    name: *const c_char,
    value: c_long,
) -> c_int {
    const CALL: &str = "CRaaS_Ckpt_index";
    if let Err(e) = started(CALL) {
        return e;
    }
    // SAFETY: see the function's contract.
    match unsafe {
        (
            text(CALL, "the checkpoint", ckpt),
            text(CALL, "the name", name),
        )
    } {
        (Ok(c), Ok(n)) => done(CALL, craas::ckpt_index(c, n, value as i64)),
        (Err(e), _) | (_, Err(e)) => e,
    }
}

/// # Safety
/// `ckpt` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn CRaaS_Commit(ckpt: *const c_char) -> c_int {
    const CALL: &str = "CRaaS_Commit";
    if let Err(e) = started(CALL) {
        return e;
    }
    // SAFETY: see the function's contract.
    match unsafe { text(CALL, "the checkpoint", ckpt) } {
        Ok(c) => done(CALL, craas::commit(c).map(|_| ())),
        Err(e) => e,
    }
}

/// 1 when the rank has a committed `ckpt`, else 0 (an error prints its line).
///
/// # Safety
/// `ckpt` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn CRaaS_Exists(ckpt: *const c_char) -> c_int {
    const CALL: &str = "CRaaS_Exists";
    if started(CALL).is_err() {
        return 0;
    }
    // SAFETY: see the function's contract.
    match unsafe { text(CALL, "the checkpoint", ckpt) }.map(craas::exists) {
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
pub unsafe extern "C" fn CRaaS_Rst_index(ckpt: *const c_char, name: *const c_char) -> c_long {
    const CALL: &str = "CRaaS_Rst_index";
    if started(CALL).is_err() {
        return 0;
    }
    // SAFETY: see the function's contract.
    let (ckpt, name) = match unsafe {
        (
            text(CALL, "the checkpoint", ckpt),
            text(CALL, "the name", name),
        )
    } {
        (Ok(c), Ok(n)) => (c, n),
        _ => return 0,
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
pub unsafe extern "C" fn CRaaS_Rst_array(
    ckpt: *const c_char,
    name: *const c_char,
    data: *mut c_void,
    bytes: usize,
) -> c_int {
    const CALL: &str = "CRaaS_Rst_array";
    if let Err(e) = started(CALL) {
        return e;
    }
    // SAFETY: see the function's contract.
    let (ckpt, name) = match unsafe {
        (
            text(CALL, "the checkpoint", ckpt),
            text(CALL, "the name", name),
        )
    } {
        (Ok(c), Ok(n)) => (c, n),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    if data.is_null() && bytes > 0 {
        return fail(
            CALL,
            &format!("array {name:?}: NULL buffer for {bytes} bytes"),
            codes::ERR_ARG,
        );
    }
    let out: &mut [u8] = if bytes == 0 {
        &mut []
    } else {
        // SAFETY: `bytes` writable bytes at `data` (the caller's contract).
        unsafe { std::slice::from_raw_parts_mut(data.cast::<u8>(), bytes) }
    };
    done(CALL, craas::rst_array(ckpt, name, out))
}

/// # Safety
/// `ckpt` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn CRaaS_Delete(ckpt: *const c_char) -> c_int {
    const CALL: &str = "CRaaS_Delete";
    if let Err(e) = started(CALL) {
        return e;
    }
    // SAFETY: see the function's contract.
    match unsafe { text(CALL, "the checkpoint", ckpt) } {
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
pub unsafe extern "C" fn CRaaSX_Wait(ckpt: *const c_char) -> c_int {
    const CALL: &str = "CRaaSX_Wait";
    if let Err(e) = started(CALL) {
        return e;
    }
    // SAFETY: see the function's contract.
    match unsafe { text(CALL, "the checkpoint", ckpt) } {
        Ok(c) => done(CALL, craas::wait(c)),
        Err(e) => e,
    }
}
