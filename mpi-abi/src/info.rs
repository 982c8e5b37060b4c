//! Info objects (and the hints of communicators), error-handler odds and ends.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use mpcrs::ErrorClass;

use crate::export::{mpi_fn, tri};
use crate::handles::*;

pub const MPI_INFO_NULL: c_int = 0x1c00_0000;
const MPI_MAX_INFO_VAL: usize = 1024;
const MPI_MAX_INFO_KEY: usize = 255;

/// An info object's entries in the order their keys were first set
/// (MPI_Info_get_nthkey counts in that order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Entries(Vec<(String, String)>);

impl Entries {
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` to `value`: in place if the key is there, else last.
    pub(crate) fn set(&mut self, key: String, value: String) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(e) => e.1 = value,
            None => self.0.push((key, value)),
        }
    }

    pub(crate) fn remove(&mut self, key: &str) -> Option<String> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn nth_key(&self, n: usize) -> Option<&str> {
        self.0.get(n).map(|(k, _)| k.as_str())
    }

    /// The entries whose keys pass `keep`, in order.
    pub(crate) fn filtered(&self, keep: impl Fn(&str) -> bool) -> Entries {
        Entries(self.0.iter().filter(|(k, _)| keep(k)).cloned().collect())
    }

    /// Sets every entry of `other` here, in its order.
    pub(crate) fn extend(&mut self, other: Entries) {
        for (k, v) in other.0 {
            self.set(k, v);
        }
    }
}

/// Hints a communicator keeps (MPI_Comm_set_info, MPI_Comm_dup_with_info):
/// the assertions MPI-4.0 section 7.4.4 defines. Others are ignored, as the
/// standard allows, so MPI_Comm_get_info shows only hints in force.
pub(crate) fn understood_comm_hint(key: &str) -> bool {
    matches!(
        key,
        "mpi_assert_no_any_tag"
            | "mpi_assert_no_any_source"
            | "mpi_assert_exact_length"
            | "mpi_assert_allow_overtaking"
    )
}

/// Raises an error of an info call: through MPI_COMM_WORLD's handler between
/// MPI_Init and MPI_Finalize; before or after (info calls are allowed then),
/// the code is returned.
fn info_error(call: &'static str, class: ErrorClass, detail: String) -> c_int {
    let live = rank_state().is_some_and(|st| st.initialized && !st.finalized);
    if !live {
        return class as c_int;
    }
    match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(&w, call, class, detail),
        Err(code) => code,
    }
}

fn bad_info(call: &'static str, h: c_int) -> c_int {
    info_error(
        call,
        ErrorClass::Info,
        format!("invalid info handle {h:#x}"),
    )
}

/// A key argument: its text, or the error for a key MPI does not allow.
///
/// # Safety
/// `p` is a NUL-terminated string.
unsafe fn key_arg(call: &'static str, p: *const c_char) -> Result<String, c_int> {
    if p.is_null() {
        return Err(info_error(
            call,
            ErrorClass::InfoKey,
            "the key is NULL".into(),
        ));
    }
    // SAFETY: by contract.
    let k = unsafe { text(p) };
    if k.is_empty() || k.len() > MPI_MAX_INFO_KEY {
        return Err(info_error(
            call,
            ErrorClass::InfoKey,
            format!(
                "a key must have 1 to {MPI_MAX_INFO_KEY} characters, not {}",
                k.len()
            ),
        ));
    }
    Ok(k)
}

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
        let call = "MPI_Info_set";
        // SAFETY: NUL-terminated strings by contract.
        let k = tri!(unsafe { key_arg(call, key) });
        // SAFETY: as above.
        let v = unsafe { text(value) };
        if v.len() > MPI_MAX_INFO_VAL {
            return info_error(call, ErrorClass::InfoValue, format!("a value has at most {MPI_MAX_INFO_VAL} characters, not {}", v.len()));
        }
        let done = rank_state().and_then(|mut st| st.info_mut(info).map(|m| m.set(k, v)));
        match done {
            Some(()) => MPI_SUCCESS,
            None => bad_info(call, info),
        }
    }

    fn Info_get(info: c_int, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        let call = "MPI_Info_get";
        // SAFETY: NUL-terminated string by contract.
        let k = tri!(unsafe { key_arg(call, key) });
        let Some(map) = info_entries(info) else { return bad_info(call, info) };
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

    fn Info_get_string(info: c_int, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        let call = "MPI_Info_get_string";
        // SAFETY: NUL-terminated string by contract.
        let k = tri!(unsafe { key_arg(call, key) });
        let Some(map) = info_entries(info) else { return bad_info(call, info) };
        let Some(v) = map.get(&k) else {
            // SAFETY: writable by contract; `value` and `buflen` stay as they are.
            unsafe { *flag = 0 };
            return MPI_SUCCESS;
        };
        // SAFETY: `buflen` readable and writable, `value` holds `*buflen`
        // bytes, `flag` writable, per MPI. A zero length only asks the size.
        unsafe {
            let cap = (*buflen).max(0) as usize;
            if cap > 0 {
                crate::env::write_cstr(v, value, cap, std::ptr::null_mut());
            }
            *buflen = v.len() as c_int + 1;
            *flag = 1;
        }
        MPI_SUCCESS
    }

    fn Info_delete(info: c_int, key: *const c_char) -> c_int {
        let call = "MPI_Info_delete";
        // SAFETY: NUL-terminated string by contract.
        let k = tri!(unsafe { key_arg(call, key) });
        let removed = rank_state().and_then(|mut st| st.info_mut(info).map(|m| m.remove(&k)));
        match removed {
            Some(Some(_)) => MPI_SUCCESS,
            Some(None) => info_error(call, ErrorClass::InfoNokey, format!("no key {k:?} in the info object")),
            None => bad_info(call, info),
        }
    }

    fn Info_get_nkeys(info: c_int, nkeys: *mut c_int) -> c_int {
        let Some(map) = info_entries(info) else { return bad_info("MPI_Info_get_nkeys", info) };
        // SAFETY: writable by contract.
        unsafe { *nkeys = map.len() as c_int };
        MPI_SUCCESS
    }

    fn Info_free(info: *mut c_int) -> c_int {
        // SAFETY: readable by contract.
        let h = unsafe { *info };
        if rank_state().is_some_and(|mut st| st.free_info(h)) {
            // SAFETY: writable by contract.
            unsafe { *info = MPI_INFO_NULL };
            MPI_SUCCESS
        } else {
            bad_info("MPI_Info_free", h)
        }
    }

    fn Info_create_env(argc: c_int, argv: *mut *mut c_char, info: *mut c_int) -> c_int {
        // SAFETY: `argc` strings in `argv` (or NULL), by contract.
        let args: Vec<String> = unsafe { c_array(argv as *const *mut c_char, argc.max(0) as usize) }
            .iter()
            .filter(|p| !p.is_null())
            // SAFETY: NUL-terminated strings.
            .map(|&p| unsafe { text(p) })
            .collect();
        let Some(h) = new_info(environment(&args)) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *info = h };
        MPI_SUCCESS
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

/// What MPI_Info_create_env reports of how the program was started (the
/// keys of MPI-4.0 section 11.4): the command and its arguments as given,
/// the number of ranks of the job, the working directory.
fn environment(args: &[String]) -> Entries {
    let mut e = Entries::default();
    if let Some(cmd) = args.first() {
        e.set("command".into(), cmd.clone());
    }
    if args.len() > 1 {
        e.set("argv".into(), args[1..].join(" "));
    }
    if let Some(w) = rank_state().and_then(|st| st.world()) {
        e.set("maxprocs".into(), w.size().to_string());
    }
    if let Ok(dir) = std::env::current_dir() {
        e.set("wdir".into(), dir.to_string_lossy().into_owned());
    }
    e
}

/// MPI_INFO_ENV's handle.
const MPI_INFO_ENV: c_int = 0x5c00_0001;

/// The program's command line, as the loader started its ranks.
static PROGRAM_ARGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Records the program's command line for MPI_INFO_ENV (by the loader).
pub(crate) fn set_program_args(args: Vec<String>) {
    let _ = PROGRAM_ARGS.set(args);
}

/// MPI_INFO_ENV's entries: the environment of the command line the job ran
/// (the process's own when the program was started directly).
fn info_env() -> Entries {
    match PROGRAM_ARGS.get() {
        Some(args) => environment(args),
        None => environment(&std::env::args().collect::<Vec<_>>()),
    }
}

/// A new info object holding `map` (MPI_Info_dup, MPI_Comm_get_info).
pub(crate) fn new_info(map: Entries) -> Option<c_int> {
    let mut st = rank_state()?;
    let h = st.add_info();
    *st.info_mut(h)? = map;
    Some(h)
}

/// The entries of an info handle (MPI_INFO_NULL: none); `None` if invalid.
pub(crate) fn info_entries(h: c_int) -> Option<Entries> {
    if h == MPI_INFO_NULL {
        return Some(Default::default());
    }
    if h == MPI_INFO_ENV {
        return Some(info_env());
    }
    rank_state()?.info_mut(h).map(|m| m.clone())
}

mpi_fn! {
    fn Info_dup(info: c_int, newinfo: *mut c_int) -> c_int {
        let Some(map) = info_entries(info) else { return bad_info("MPI_Info_dup", info) };
        let Some(h) = new_info(map) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *newinfo = h };
        MPI_SUCCESS
    }

    fn Info_get_nthkey(info: c_int, n: c_int, key: *mut c_char) -> c_int {
        let call = "MPI_Info_get_nthkey";
        let Some(map) = info_entries(info) else { return bad_info(call, info) };
        match usize::try_from(n).ok().and_then(|n| map.nth_key(n)) {
            Some(k) => {
                // SAFETY: MPI specifies a buffer of MPI_MAX_INFO_KEY + 1 bytes.
                unsafe { crate::env::write_cstr(k, key, MPI_MAX_INFO_KEY + 1, std::ptr::null_mut()) };
                MPI_SUCCESS
            }
            None => info_error(call, ErrorClass::Arg, format!("key number {n} of an info object of {} keys", map.len())),
        }
    }

    fn Info_get_valuelen(info: c_int, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) -> c_int {
        let call = "MPI_Info_get_valuelen";
        // SAFETY: NUL-terminated string by contract.
        let k = tri!(unsafe { key_arg(call, key) });
        let Some(map) = info_entries(info) else { return bad_info(call, info) };
        // SAFETY: writable by contract.
        unsafe {
            *flag = map.get(&k).is_some() as c_int;
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
        let hints = map.filtered(understood_comm_hint);
        rank_state().expect("inside a rank").comm_infos.entry(comm).or_default().extend(hints);
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
            rank_state().expect("inside a rank").comm_infos.insert(unsafe { *newcomm }, map.filtered(understood_comm_hint));
        }
        rc
    }
}
