//! Info objects (and the hints of communicators), error-handler odds and ends.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use mpcrs::ErrorClass;

use crate::export::{mpi_fn, tri};
use crate::handles::*;

pub const MPI_INFO_NULL: c_int = 0x1c00_0000;
const MPI_MAX_INFO_VAL: usize = 1024;

/// # Safety
/// `p` is a NUL-terminated string.
unsafe fn text(p: *const c_char) -> String {
    // SAFETY: by contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

mpi_fn! {
    fn Info_create(info: *mut c_int) -> c_int {
        let Some(mut st) = rank_state() else { return ErrorClass::Other as c_int };
        let h = st.add_info();
        // SAFETY: writable by contract.
        unsafe { *info = h };
        MPI_SUCCESS
    }

    fn Info_set(info: c_int, key: *const c_char, value: *const c_char) -> c_int {
        let Some(mut st) = rank_state() else { return ErrorClass::Other as c_int };
        // SAFETY: NUL-terminated strings by contract.
        let (k, v) = unsafe { (text(key), text(value)) };
        match st.info_mut(info) {
            Some(map) => {
                map.insert(k, v);
                MPI_SUCCESS
            }
            None => ErrorClass::Arg as c_int,
        }
    }

    fn Info_get(info: c_int, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        let Some(mut st) = rank_state() else { return ErrorClass::Other as c_int };
        // SAFETY: NUL-terminated string by contract.
        let k = unsafe { text(key) };
        let Some(map) = st.info_mut(info) else { return ErrorClass::Arg as c_int };
        match map.get(&k) {
            Some(v) => {
                // SAFETY: `value` holds valuelen + 1 bytes, per MPI.
                unsafe {
                    crate::env::write_cstr(v, value, (valuelen.max(0) as usize + 1).min(MPI_MAX_INFO_VAL + 1), std::ptr::null_mut());
                    *flag = 1;
                }
            }
            // SAFETY: writable by contract.
            None => unsafe { *flag = 0 },
        }
        MPI_SUCCESS
    }

    fn Info_delete(info: c_int, key: *const c_char) -> c_int {
        let Some(mut st) = rank_state() else { return ErrorClass::Other as c_int };
        // SAFETY: NUL-terminated string by contract.
        let k = unsafe { text(key) };
        match st.info_mut(info).map(|m| m.remove(&k)) {
            Some(Some(_)) => MPI_SUCCESS,
            _ => ErrorClass::Arg as c_int,
        }
    }

    fn Info_get_nkeys(info: c_int, nkeys: *mut c_int) -> c_int {
        let Some(mut st) = rank_state() else { return ErrorClass::Other as c_int };
        match st.info_mut(info) {
            Some(m) => {
                // SAFETY: writable by contract.
                unsafe { *nkeys = m.len() as c_int };
                MPI_SUCCESS
            }
            None => ErrorClass::Arg as c_int,
        }
    }

    fn Info_free(info: *mut c_int) -> c_int {
        let Some(mut st) = rank_state() else { return ErrorClass::Other as c_int };
        // SAFETY: readable and writable by contract.
        if st.free_info(unsafe { *info }) {
            // SAFETY: writable by contract.
            unsafe { *info = MPI_INFO_NULL };
            MPI_SUCCESS
        } else {
            ErrorClass::Arg as c_int
        }
    }

    fn Errhandler_free(errhandler: *mut c_int) -> c_int {
        // Only the handle goes: a handler stays in force where it is set, and
        // a user handler's function is kept for those communicators.
        // SAFETY: writable by contract.
        unsafe { *errhandler = 0x1400_0000 }; // MPI_ERRHANDLER_NULL
        MPI_SUCCESS
    }

    fn Comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> c_int {
        let c = tri!(comm_for("MPI_Comm_call_errhandler", comm));
        if crate::errhandler::call_user(&c, errorcode).is_some() {
            return MPI_SUCCESS;
        }
        let class = crate::env::class_of(errorcode).unwrap_or(ErrorClass::Unknown);
        // Fatal handlers end the job here; ERRORS_RETURN makes this a no-op.
        fail(&c, "MPI_Comm_call_errhandler", class, format!("error code {errorcode} raised by the program"));
        MPI_SUCCESS
    }
}

/// A new info object holding `map` (MPI_Info_dup, MPI_Comm_get_info).
pub(crate) fn new_info(map: std::collections::BTreeMap<String, String>) -> Option<c_int> {
    let mut st = rank_state()?;
    let h = st.add_info();
    *st.info_mut(h)? = map;
    Some(h)
}

/// The entries of an info handle (MPI_INFO_NULL: none); `None` if invalid.
pub(crate) fn info_entries(h: c_int) -> Option<std::collections::BTreeMap<String, String>> {
    if h == MPI_INFO_NULL {
        return Some(Default::default());
    }
    rank_state()?.info_mut(h).map(|m| m.clone())
}

mpi_fn! {
    fn Info_dup(info: c_int, newinfo: *mut c_int) -> c_int {
        let Some(map) = info_entries(info) else { return ErrorClass::Info as c_int };
        let Some(h) = new_info(map) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *newinfo = h };
        MPI_SUCCESS
    }

    fn Info_get_nthkey(info: c_int, n: c_int, key: *mut c_char) -> c_int {
        let Some(map) = info_entries(info) else { return ErrorClass::Info as c_int };
        match usize::try_from(n).ok().and_then(|n| map.keys().nth(n)) {
            Some(k) => {
                // SAFETY: MPI specifies a buffer of MPI_MAX_INFO_KEY + 1 bytes.
                unsafe { crate::env::write_cstr(k, key, 256, std::ptr::null_mut()) };
                MPI_SUCCESS
            }
            None => ErrorClass::Arg as c_int,
        }
    }

    fn Info_get_valuelen(info: c_int, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) -> c_int {
        let Some(map) = info_entries(info) else { return ErrorClass::Info as c_int };
        // SAFETY: NUL-terminated string by contract.
        let k = unsafe { text(key) };
        // SAFETY: writable by contract.
        unsafe {
            *flag = map.contains_key(&k) as c_int;
            if let Some(v) = map.get(&k) {
                *valuelen = v.len() as c_int;
            }
        }
        MPI_SUCCESS
    }

    fn Comm_set_info(comm: MPI_Comm, info: c_int) -> c_int {
        let c = tri!(comm_for("MPI_Comm_set_info", comm));
        let Some(map) = info_entries(info) else {
            return fail(&c, "MPI_Comm_set_info", ErrorClass::Info, format!("invalid info handle {info:#x}"));
        };
        rank_state().expect("inside a rank").comm_infos.entry(comm).or_default().extend(map);
        MPI_SUCCESS
    }

    fn Comm_get_info(comm: MPI_Comm, info_used: *mut c_int) -> c_int {
        let _c = tri!(comm_for("MPI_Comm_get_info", comm));
        let map = rank_state().and_then(|st| st.comm_infos.get(&comm).cloned()).unwrap_or_default();
        let Some(h) = new_info(map) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *info_used = h };
        MPI_SUCCESS
    }

    fn Comm_dup_with_info(comm: MPI_Comm, info: c_int, newcomm: *mut MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Comm_dup_with_info", comm));
        let Some(map) = info_entries(info) else {
            return fail(&c, "MPI_Comm_dup_with_info", ErrorClass::Info, format!("invalid info handle {info:#x}"));
        };
        // SAFETY: forwarded.
        let rc = unsafe { crate::comm::PMPI_Comm_dup(comm, newcomm) };
        if rc == MPI_SUCCESS {
            // The new communicator's hints are the given ones, not the old one's.
            // SAFETY: just written.
            rank_state().expect("inside a rank").comm_infos.insert(unsafe { *newcomm }, map);
        }
        rc
    }
}
