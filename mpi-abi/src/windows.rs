//! Windows (MPI_Win) as handles: creation and free, attributes, names, info,
//! groups, error handlers, and the synchronization calls. The runtime's
//! `mpcrs::raw::Window` does the work; the data calls are in rma.rs.

use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

use mpcrs::raw::{Flavor, Memory, Window};
use mpcrs::{ErrorClass, ErrorHandler};

use crate::attributes::{self, Kind};
use crate::ctypes::*;
use crate::errhandler::ret_on;
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::info::Entries;

/// MPICH's kind bits for a window handle in its direct range, then an index.
const WIN_HANDLE: MPI_Win = 0xa000_0000u32 as c_int;
const MPI_WIN_NULL: MPI_Win = 0x2000_0000;

pub(crate) const MPI_WIN_BASE: c_int = 0x6600_0001;
pub(crate) const MPI_WIN_SIZE: c_int = 0x6600_0003;
pub(crate) const MPI_WIN_DISP_UNIT: c_int = 0x6600_0005;
pub(crate) const MPI_WIN_CREATE_FLAVOR: c_int = 0x6600_0007;
pub(crate) const MPI_WIN_MODEL: c_int = 0x6600_0009;
const MPI_WIN_UNIFIED: c_int = 2;
const MPI_LOCK_EXCLUSIVE: c_int = 234;
const MPI_LOCK_SHARED: c_int = 235;
const MPI_MAX_OBJECT_NAME: usize = 128;

/// The values MPI_Win_get_attr hands out pointers to: they live as long as
/// the window's handle.
struct Predefined {
    size: MPI_Aint,
    disp_unit: c_int,
    flavor: c_int,
    model: c_int,
}

/// A window handle's entry in its rank's table.
pub(crate) struct WinEntry {
    pub(crate) win: Arc<Window>,
    predefined: Box<Predefined>,
    info: Entries,
}

/// One rank's windows, by handle index.
#[derive(Default)]
pub(crate) struct Table {
    entries: Slots<WinEntry>,
}

/// The index a window handle names, if it is one.
fn index(h: MPI_Win) -> Option<usize> {
    (h & !INDEX_MASK == WIN_HANDLE).then_some((h & INDEX_MASK) as usize)
}

impl Table {
    fn add(&mut self, e: WinEntry) -> MPI_Win {
        let win = e.win.clone();
        let i = self.entries.insert(e);
        if let Some(index) = published_windows(false) {
            index.publish(i, &win);
        }
        WIN_HANDLE | i as c_int
    }

    fn get(&self, h: MPI_Win) -> Option<&WinEntry> {
        self.entries.get(index(h)?)
    }

    fn get_mut(&mut self, h: MPI_Win) -> Option<&mut WinEntry> {
        self.entries.get_mut(index(h)?)
    }

    fn put_back(&mut self, h: MPI_Win, e: WinEntry) {
        let i = (h & INDEX_MASK) as usize;
        if let Some(index) = published_windows(false) {
            index.publish(i, &e.win);
        }
        self.entries.put_back(i, e);
    }

    fn take(&mut self, h: MPI_Win) -> Option<WinEntry> {
        let i = index(h)?;
        if let Some(index) = published_windows(false) {
            index.withdraw(i);
        }
        self.entries.take(i)
    }
}

/// Raises an error of a call that has no valid window on MPI_COMM_WORLD.
fn world_error(call: &'static str, class: ErrorClass, detail: String) -> c_int {
    match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(&w, call, class, detail),
        Err(code) => code,
    }
}

/// The window of handle `h`, or the error (MPI_ERR_WIN on MPI_COMM_WORLD).
/// Found without a lock or a reference count (published.rs): the reference
/// is for the length of the calling MPI call.
#[inline(always)]
pub(crate) fn win_for(call: &'static str, h: MPI_Win) -> Result<&'static Window, c_int> {
    match published_window(h) {
        Some(w) => Ok(w),
        None => win_for_unpublished(call, h),
    }
}

/// The window of handle `h` if the calling rank published it (see
/// [`win_for`]): no error raised otherwise.
#[inline(always)]
pub(crate) fn published_window(h: MPI_Win) -> Option<&'static Window> {
    published_windows(true)
        .zip(index(h))
        .and_then(|(p, i)| p.get(i))
}

/// [`win_for`] of a window not in the published index.
#[cold]
#[inline(never)]
fn win_for_unpublished(call: &'static str, h: MPI_Win) -> Result<&'static Window, c_int> {
    win_for_locked(call, h).map(|w| {
        // SAFETY: as a published window: the table entry owns it until the
        // rank frees it, which MPI forbids during a call on it.
        unsafe { &*Arc::as_ptr(&w) }
    })
}

/// The window of handle `h` through the rank's tables (indices beyond the
/// published ones, MPI sessions without MPI_Init), or the error.
fn win_for_locked(call: &'static str, h: MPI_Win) -> Result<Arc<Window>, c_int> {
    let _world = comm_for(call, MPI_COMM_WORLD)?;
    let found = rank_state().and_then(|st| st.windows.get(h).map(|e| e.win.clone()));
    found.ok_or_else(|| {
        world_error(
            call,
            ErrorClass::Win,
            format!("invalid window handle {h:#x}"),
        )
    })
}

/// Raises an error on window `w` (its handler: user, fatal or return).
pub(crate) fn win_fail(w: &Window, call: &'static str, class: ErrorClass, detail: String) -> c_int {
    fail(w.communicator(), call, class, detail)
}

/// A runtime result on window `w` as a return code.
pub(crate) fn win_ret(w: &Window, r: mpcrs::Result<()>) -> c_int {
    ret_on(w.communicator(), r)
}

/// Creates the window (collective) and its handle.
///
/// # Safety
/// `win` writable; `baseptr` (when given) writable as a `void *`.
#[allow(clippy::too_many_arguments)]
unsafe fn create(
    call: &'static str,
    comm: MPI_Comm,
    memory: Memory,
    size: MPI_Aint,
    disp_unit: c_int,
    info: c_int,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    let c = tri!(comm_for(call, comm));
    if size < 0 {
        return fail(
            &c,
            call,
            ErrorClass::Size,
            format!("negative window size {size}"),
        );
    }
    if disp_unit <= 0 {
        return fail(
            &c,
            call,
            ErrorClass::Disp,
            format!("displacement unit {disp_unit} is not positive"),
        );
    }
    let Some(hints) = crate::info::info_entries(info) else {
        return fail(
            &c,
            call,
            ErrorClass::Info,
            format!("invalid info handle {info:#x}"),
        );
    };
    let w = match Window::create(&c, call, memory, disp_unit as usize) {
        Ok(w) => w,
        Err(e) => return crate::errhandler::code_on(&c, &e),
    };
    let flavor = match w.flavor() {
        Flavor::Create => 1,
        Flavor::Allocate => 2,
        Flavor::Dynamic => 3,
        Flavor::Shared => 4,
    };
    if !baseptr.is_null() {
        // SAFETY: `baseptr` is a `void **` by contract (allocating calls).
        unsafe { *(baseptr as *mut *mut c_void) = w.base().cast() };
    }
    let entry = WinEntry {
        predefined: Box::new(Predefined {
            size: w.size() as MPI_Aint,
            disp_unit: w.disp_unit() as c_int,
            flavor,
            model: MPI_WIN_UNIFIED,
        }),
        win: Arc::new(w),
        info: window_hints(&hints),
    };
    let h = rank_state().expect("inside a rank").windows.add(entry);
    // SAFETY: writable by contract.
    unsafe { *win = h };
    MPI_SUCCESS
}

/// The hints MPI-3.1 section 11.2.1 defines for windows, with their defaults
/// (MPI_Win_get_info shows each, as set or by default). Others are ignored,
/// as the standard allows.
const HINTS: [(&str, &str); 6] = [
    ("no_locks", "false"),
    ("accumulate_ordering", "rar,raw,war,waw"),
    ("accumulate_ops", "same_op_no_op"),
    ("same_size", "false"),
    ("same_disp_unit", "false"),
    ("alloc_shared_noncontig", "false"),
];

fn window_hints(given: &Entries) -> Entries {
    given.filtered(|k| HINTS.iter().any(|(h, _)| *h == k))
}

fn lock_type(t: c_int) -> Option<bool> {
    match t {
        MPI_LOCK_EXCLUSIVE => Some(true),
        MPI_LOCK_SHARED => Some(false),
        _ => None,
    }
}

fn group_arg(call: &'static str, w: &Window, g: c_int) -> Result<mpcrs::Group, c_int> {
    let found = rank_state().and_then(|st| st.group(g));
    found.ok_or_else(|| {
        win_fail(
            w,
            call,
            ErrorClass::Group,
            format!("invalid group handle {g:#x}"),
        )
    })
}

mpi_fn! {
    fn Win_create(base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: c_int, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        let memory = Memory::Given { base: base.cast(), size: size.max(0) as usize };
        // SAFETY: forwarded from the C caller.
        unsafe { create("MPI_Win_create", comm, memory, size, disp_unit, info, std::ptr::null_mut(), win) }
    }

    fn Win_allocate(size: MPI_Aint, disp_unit: c_int, info: c_int, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        let memory = Memory::Allocate { size: size.max(0) as usize };
        // SAFETY: forwarded from the C caller.
        unsafe { create("MPI_Win_allocate", comm, memory, size, disp_unit, info, baseptr, win) }
    }

    fn Win_allocate_shared(size: MPI_Aint, disp_unit: c_int, info: c_int, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        let memory = Memory::Shared { size: size.max(0) as usize };
        // SAFETY: forwarded from the C caller.
        unsafe { create("MPI_Win_allocate_shared", comm, memory, size, disp_unit, info, baseptr, win) }
    }

    fn Win_create_dynamic(info: c_int, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { create("MPI_Win_create_dynamic", comm, Memory::Dynamic, 0, 1, info, std::ptr::null_mut(), win) }
    }

    fn Win_free(win: *mut MPI_Win) -> c_int {
        let call = "MPI_Win_free";
        // SAFETY: readable by contract.
        let h = unsafe { *win };
        let w = tri!(win_for(call, h));
        if let Err((class, detail)) = attributes::delete_all(Kind::Win, h) {
            return win_fail(&w, call, class, detail);
        }
        let entry = rank_state().expect("inside a rank").windows.take(h).expect("looked up above");
        let owned = match Arc::try_unwrap(entry.win) {
            Ok(o) => o,
            Err(shared) => {
                let rc = win_fail(&shared, call, ErrorClass::Win, "the window is in use by another thread of this rank".into());
                rank_state().expect("inside a rank").windows.put_back(h, WinEntry { win: shared, predefined: entry.predefined, info: entry.info });
                return rc;
            }
        };
        // The user handler is found by the window's communicator, which goes.
        let errhandler = crate::errhandler::of(owned.communicator());
        crate::errhandler::set(owned.communicator(), h, None);
        match owned.free(call) {
            Ok(()) => {
                // SAFETY: writable by contract.
                unsafe { *win = MPI_WIN_NULL };
                MPI_SUCCESS
            }
            Err(failed) => {
                let (w, e) = *failed;
                if errhandler.is_some() {
                    crate::errhandler::set(w.communicator(), h, errhandler);
                }
                let rc = crate::errhandler::code_on(w.communicator(), &e);
                rank_state().expect("inside a rank").windows.put_back(h, WinEntry { win: Arc::new(w), predefined: entry.predefined, info: entry.info });
                rc
            }
        }
    }

    fn Win_attach(win: MPI_Win, base: *mut c_void, size: MPI_Aint) -> c_int {
        let call = "MPI_Win_attach";
        let w = tri!(win_for(call, win));
        if size < 0 {
            return win_fail(&w, call, ErrorClass::Size, format!("negative size {size}"));
        }
        win_ret(&w, w.attach(call, base.cast(), size as usize))
    }

    fn Win_detach(win: MPI_Win, base: *const c_void) -> c_int {
        let call = "MPI_Win_detach";
        let w = tri!(win_for(call, win));
        win_ret(&w, w.detach(call, base.cast()))
    }

    fn Win_shared_query(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int {
        let call = "MPI_Win_shared_query";
        let w = tri!(win_for(call, win));
        match w.shared_query(call, rank) {
            Ok((b, s, d)) => {
                // SAFETY: writable by contract (`baseptr` is a `void **`).
                unsafe {
                    *size = s as MPI_Aint;
                    *disp_unit = d as c_int;
                    *(baseptr as *mut *mut c_void) = b.cast();
                }
                MPI_SUCCESS
            }
            Err(e) => crate::errhandler::code_on(w.communicator(), &e),
        }
    }

    fn Win_get_attr(win: MPI_Win, win_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        let call = "MPI_Win_get_attr";
        let w = tri!(win_for(call, win));
        let predefined: Option<*mut c_void> = {
            let st = rank_state().expect("inside a rank");
            let e = st.windows.get(win).expect("looked up above");
            let p = &*e.predefined;
            match win_keyval {
                MPI_WIN_BASE => Some(e.win.base().cast()),
                MPI_WIN_SIZE => Some(&p.size as *const MPI_Aint as *mut c_void),
                MPI_WIN_DISP_UNIT => Some(&p.disp_unit as *const c_int as *mut c_void),
                MPI_WIN_CREATE_FLAVOR => Some(&p.flavor as *const c_int as *mut c_void),
                MPI_WIN_MODEL => Some(&p.model as *const c_int as *mut c_void),
                _ => None,
            }
        };
        let v = match predefined {
            Some(v) => Some(v),
            None => match attributes::get(Kind::Win, win, win_keyval) {
                Ok(v) => v,
                Err((class, detail)) => return win_fail(&w, call, class, detail),
            },
        };
        // SAFETY: `attribute_val` is a `void **` and `flag` writable, per MPI.
        unsafe {
            *flag = v.is_some() as c_int;
            if let Some(v) = v {
                *(attribute_val as *mut *mut c_void) = v;
            }
        }
        MPI_SUCCESS
    }

    fn Win_set_attr(win: MPI_Win, win_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let call = "MPI_Win_set_attr";
        let w = tri!(win_for(call, win));
        match attributes::set(Kind::Win, win, win_keyval, attribute_val) {
            Ok(()) => MPI_SUCCESS,
            Err((class, detail)) => win_fail(&w, call, class, detail),
        }
    }

    fn Win_delete_attr(win: MPI_Win, win_keyval: c_int) -> c_int {
        let call = "MPI_Win_delete_attr";
        let w = tri!(win_for(call, win));
        match attributes::delete(Kind::Win, win, win_keyval) {
            Ok(()) => MPI_SUCCESS,
            Err((class, detail)) => win_fail(&w, call, class, detail),
        }
    }

    fn Win_create_keyval(win_copy_attr_fn: Option<WinCopyAttrFn>, win_delete_attr_fn: Option<WinDeleteAttrFn>, win_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        let _world = tri!(comm_for("MPI_Win_create_keyval", MPI_COMM_WORLD));
        // The callbacks have the communicator ones' C signature (handles are ints).
        let k = attributes::create_keyval(Kind::Win, win_copy_attr_fn, win_delete_attr_fn, extra_state);
        // SAFETY: writable by contract.
        unsafe { *win_keyval = k };
        MPI_SUCCESS
    }

    fn Win_free_keyval(win_keyval: *mut c_int) -> c_int {
        let call = "MPI_Win_free_keyval";
        // SAFETY: readable by contract.
        let k = unsafe { *win_keyval };
        if let Err((class, detail)) = attributes::free_keyval(Kind::Win, k) {
            return world_error(call, class, detail);
        }
        // SAFETY: writable by contract.
        unsafe { *win_keyval = attributes::KEYVAL_INVALID };
        MPI_SUCCESS
    }

    fn Win_set_name(win: MPI_Win, win_name: *const c_char) -> c_int {
        let w = tri!(win_for("MPI_Win_set_name", win));
        // SAFETY: a NUL-terminated string by contract.
        let n = unsafe { std::ffi::CStr::from_ptr(win_name) }.to_string_lossy();
        w.communicator().set_name(&n);
        MPI_SUCCESS
    }

    fn Win_get_name(win: MPI_Win, win_name: *mut c_char, resultlen: *mut c_int) -> c_int {
        let w = tri!(win_for("MPI_Win_get_name", win));
        // SAFETY: MPI specifies a buffer of MPI_MAX_OBJECT_NAME bytes.
        unsafe { crate::env::write_cstr(&w.communicator().name(), win_name, MPI_MAX_OBJECT_NAME, resultlen) };
        MPI_SUCCESS
    }

    fn Win_get_group(win: MPI_Win, group: *mut c_int) -> c_int {
        let w = tri!(win_for("MPI_Win_get_group", win));
        let h = rank_state().expect("inside a rank").add_group(w.communicator().group());
        // SAFETY: writable by contract.
        unsafe { *group = h };
        MPI_SUCCESS
    }

    fn Win_set_info(win: MPI_Win, info: c_int) -> c_int {
        let call = "MPI_Win_set_info";
        let w = tri!(win_for(call, win));
        let Some(map) = crate::info::info_entries(info) else {
            return win_fail(&w, call, ErrorClass::Info, format!("invalid info handle {info:#x}"));
        };
        if let Some(e) = rank_state().expect("inside a rank").windows.get_mut(win) {
            e.info.extend(window_hints(&map));
        }
        MPI_SUCCESS
    }

    fn Win_get_info(win: MPI_Win, info_used: *mut c_int) -> c_int {
        let _w = tri!(win_for("MPI_Win_get_info", win));
        let mut map = Entries::default();
        for (k, v) in HINTS {
            map.set(k.into(), v.into());
        }
        map.extend(rank_state().and_then(|st| st.windows.get(win).map(|e| e.info.clone())).unwrap_or_default());
        let Some(h) = crate::info::new_info(map) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *info_used = h };
        MPI_SUCCESS
    }

    fn Win_create_errhandler(win_errhandler_fn: Option<WinErrhandlerFn>, errhandler: *mut MPI_Errhandler) -> c_int {
        crate::errhandler::create("MPI_Win_create_errhandler", win_errhandler_fn, errhandler)
    }

    fn Win_set_errhandler(win: MPI_Win, errhandler: MPI_Errhandler) -> c_int {
        let call = "MPI_Win_set_errhandler";
        let w = tri!(win_for(call, win));
        let c = w.communicator();
        if crate::errhandler::is_user(errhandler) {
            crate::errhandler::set(c, win, Some(errhandler));
            return MPI_SUCCESS;
        }
        let h = match errhandler {
            MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => ErrorHandler::Fatal,
            MPI_ERRORS_RETURN => ErrorHandler::Return,
            _ => return win_fail(&w, call, ErrorClass::Arg, format!("invalid error handler {errhandler:#x}")),
        };
        crate::errhandler::set(c, win, None);
        c.set_error_handler(h);
        MPI_SUCCESS
    }

    fn Win_get_errhandler(win: MPI_Win, errhandler: *mut MPI_Errhandler) -> c_int {
        let w = tri!(win_for("MPI_Win_get_errhandler", win));
        let c = w.communicator();
        let h = match (crate::errhandler::of(c), c.error_handler()) {
            (Some(user), _) => user,
            (None, ErrorHandler::Fatal) => MPI_ERRORS_ARE_FATAL,
            (None, ErrorHandler::Return) => MPI_ERRORS_RETURN,
        };
        // SAFETY: writable by contract.
        unsafe { *errhandler = h };
        MPI_SUCCESS
    }

    fn Win_call_errhandler(win: MPI_Win, errorcode: c_int) -> c_int {
        let call = "MPI_Win_call_errhandler";
        let w = tri!(win_for(call, win));
        if crate::errhandler::call_user(w.communicator(), errorcode).is_some() {
            return MPI_SUCCESS;
        }
        let class = crate::env::class_of(errorcode).unwrap_or(ErrorClass::Unknown);
        win_fail(&w, call, class, format!("error code {errorcode} raised by the program"));
        MPI_SUCCESS
    }

    fn Win_fence(assert: c_int, win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_fence", win));
        win_ret(&w, w.fence("MPI_Win_fence", assert))
    }

    fn Win_lock(lock_type_: c_int, rank: c_int, assert: c_int, win: MPI_Win) -> c_int {
        let call = "MPI_Win_lock";
        let w = tri!(win_for(call, win));
        let Some(exclusive) = lock_type(lock_type_) else {
            return win_fail(&w, call, ErrorClass::Locktype, format!("invalid lock type {lock_type_}"));
        };
        win_ret(&w, w.lock(call, exclusive, rank, assert))
    }

    fn Win_unlock(rank: c_int, win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_unlock", win));
        win_ret(&w, w.unlock("MPI_Win_unlock", rank))
    }

    fn Win_lock_all(assert: c_int, win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_lock_all", win));
        win_ret(&w, w.lock_all("MPI_Win_lock_all", assert))
    }

    fn Win_unlock_all(win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_unlock_all", win));
        win_ret(&w, w.unlock_all("MPI_Win_unlock_all"))
    }

    fn Win_flush(rank: c_int, win: MPI_Win) -> c_int, fast {
        published_window(win)?.flush_completes_here(rank).then_some(MPI_SUCCESS)
    } {
        let w = tri!(win_for("MPI_Win_flush", win));
        win_ret(&w, w.flush("MPI_Win_flush", rank, true))
    }

    fn Win_flush_local(rank: c_int, win: MPI_Win) -> c_int, fast {
        published_window(win)?.flush_completes_here(rank).then_some(MPI_SUCCESS)
    } {
        let w = tri!(win_for("MPI_Win_flush_local", win));
        win_ret(&w, w.flush("MPI_Win_flush_local", rank, false))
    }

    fn Win_flush_all(win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_flush_all", win));
        win_ret(&w, w.flush_all("MPI_Win_flush_all", true))
    }

    fn Win_flush_local_all(win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_flush_local_all", win));
        win_ret(&w, w.flush_all("MPI_Win_flush_local_all", false))
    }

    fn Win_sync(win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_sync", win));
        w.sync();
        MPI_SUCCESS
    }

    fn Win_post(group: c_int, assert: c_int, win: MPI_Win) -> c_int {
        let call = "MPI_Win_post";
        let w = tri!(win_for(call, win));
        let g = tri!(group_arg(call, &w, group));
        win_ret(&w, w.post(call, &g, assert))
    }

    fn Win_start(group: c_int, assert: c_int, win: MPI_Win) -> c_int {
        let call = "MPI_Win_start";
        let w = tri!(win_for(call, win));
        let g = tri!(group_arg(call, &w, group));
        win_ret(&w, w.start(call, &g, assert))
    }

    fn Win_complete(win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_complete", win));
        win_ret(&w, w.complete_access("MPI_Win_complete"))
    }

    fn Win_wait(win: MPI_Win) -> c_int {
        let w = tri!(win_for("MPI_Win_wait", win));
        win_ret(&w, w.wait_exposure("MPI_Win_wait", true).map(|_| ()))
    }

    fn Win_test(win: MPI_Win, flag: *mut c_int) -> c_int {
        let call = "MPI_Win_test";
        let w = tri!(win_for(call, win));
        match w.wait_exposure(call, false) {
            Ok(done) => {
                // SAFETY: writable by contract.
                unsafe { *flag = done as c_int };
                MPI_SUCCESS
            }
            Err(e) => crate::errhandler::code_on(w.communicator(), &e),
        }
    }
}
