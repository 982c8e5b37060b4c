//! Environment management: init, finalize, abort, queries, timers, errors.

use std::os::raw::{c_char, c_int, c_void};

use mpcrs::{ErrorClass, ErrorHandler};

use crate::export::{mpi_fn, mpi_leaf_fn, tri};
use crate::handles::*;

/// Copies `s` into a C buffer of `cap` bytes (NUL-terminated) and sets `len`.
///
/// # Safety
/// `buf` writable for `cap` bytes, `len` writable.
pub(crate) unsafe fn write_cstr(s: &str, buf: *mut c_char, cap: usize, len: *mut c_int) {
    let n = s.len().min(cap.saturating_sub(1));
    // SAFETY: guaranteed by the caller.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr().cast::<c_char>(), buf, n);
        *buf.add(n) = 0;
        if !len.is_null() {
            *len = n as c_int;
        }
    }
}

/// The thread level of MPI_Init_thread (MPI_Init: MPI_THREAD_SINGLE).
static THREAD_LEVEL: std::sync::atomic::AtomicI32 =
    std::sync::atomic::AtomicI32::new(MPI_THREAD_SINGLE);

/// Whether the caller is a ULT (a rank's own, or a helper), not an OS thread
/// of the program.
fn mpcrs_scheduler_in_ult() -> bool {
    mpcrs::raw::in_ult()
}

fn init(call: &'static str) -> c_int {
    if !job_exists() {
        start_here(call);
    }
    let Some(mut st) = rank_state() else {
        outside_rank(call);
    };
    let world = st.world().expect("world installed before main");
    if st.initialized {
        drop(st);
        return fail(
            &world,
            call,
            ErrorClass::Other,
            "MPI is already initialized".into(),
        );
    }
    st.initialized = true;
    // SAFETY: pthread_self has no preconditions.
    st.main_thread = Some((mpcrs_scheduler_in_ult(), unsafe { libc::pthread_self() }));
    crate::handles::set_live(&st, true);
    MPI_SUCCESS
}

/// A program started directly, not through mpcrs-exec (one that is not
/// position-independent, under `mpcrs-run --process-mode`; or run on its own, a
/// job of one rank): the calling thread becomes this process's rank.
fn start_here(call: &'static str) {
    let fatal = |e: String| -> ! {
        mpcrs_settings::report!(error, "mpcrs: {call}: {e}");
        mpcrs::abort_job(mpcrs::FATAL_EXIT_CODE)
    };
    let cfg =
        mpcrs::JobConfig::from_env().unwrap_or_else(|e| fatal(format!("bad job settings: {e}")));
    create_job(cfg.ranks);
    let world = mpcrs::adopt_calling_thread(&cfg).unwrap_or_else(|e| fatal(e));
    install_world(world);
}

fn with_state<R>(f: impl FnOnce(&mut RankState) -> R) -> R {
    let mut st = rank_state().unwrap_or_else(|| outside_rank("MPI"));
    f(&mut st)
}

fn errhandler_of(h: MPI_Errhandler) -> Option<ErrorHandler> {
    match h {
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => Some(ErrorHandler::Fatal),
        MPI_ERRORS_RETURN => Some(ErrorHandler::Return),
        _ => None,
    }
}

pub(crate) fn class_of(code: c_int) -> Option<ErrorClass> {
    ErrorClass::from_code(code)
}

fn world_of_caller(call: &'static str) -> Result<CommRef, c_int> {
    comm_for(call, MPI_COMM_WORLD)
}

mpi_fn! {
    fn Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
        init("MPI_Init")
    }

    fn Init_thread(_argc: *mut c_int, _argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) -> c_int {
        // Every level up to MPI_THREAD_MULTIPLE is provided: threads a rank
        // starts act for that rank (see handles.rs) and may call MPI at once.
        let level = required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
        if level == MPI_THREAD_MULTIPLE {
            mpcrs::raw::enable_thread_multiple();
        }
        THREAD_LEVEL.fetch_max(level, std::sync::atomic::Ordering::Relaxed);
        let r = init("MPI_Init_thread");
        if r == MPI_SUCCESS && !provided.is_null() {
            // SAFETY: `provided` is writable by contract.
            unsafe { *provided = level };
        }
        r
    }

    fn Initialized(flag: *mut c_int) -> c_int {
        let v = rank_state().is_some_and(|st| st.initialized);
        // SAFETY: `flag` is writable by contract.
        unsafe { *flag = v as c_int };
        MPI_SUCCESS
    }

    fn Finalized(flag: *mut c_int) -> c_int {
        let v = rank_state().is_some_and(|st| st.finalized);
        // SAFETY: `flag` is writable by contract.
        unsafe { *flag = v as c_int };
        MPI_SUCCESS
    }

    fn Finalize() -> c_int {
        let world = tri!(world_of_caller("MPI_Finalize"));
        // First of all, as if MPI_COMM_SELF were freed: its attributes' delete
        // callbacks run, and may still call MPI (MPI-3.1 section 8.7.1).
        if let Err((class, detail)) = crate::comm::delete_predefined_attributes() {
            fail(&world, "MPI_Finalize", class, detail);
        }
        // Operations whose requests were freed complete before the rank leaves.
        let freed = with_state(|st| std::mem::take(&mut st.freed));
        crate::requests::finish_freed(freed, true);
        // Collective: no rank leaves while others may still talk to it.
        mpcrs::raw::barrier(&world);
        with_state(|st| {
            st.finalized = true;
            crate::handles::set_live(st, false);
        });
        // A rank that is the program's own thread: its process waits for the others.
        mpcrs::release_calling_thread();
        MPI_SUCCESS
    }

    fn Abort(_comm: MPI_Comm, errorcode: c_int) -> c_int {
        let rank = mpcrs::current_rank().unwrap_or(-1);
        mpcrs_settings::report!(error, "mpcrs: MPI_Abort called by rank {rank} with error code {errorcode}; ending the job");
        mpcrs::abort_job(if errorcode == 0 { 1 } else { errorcode & 0xff })
    }

    fn Query_thread(provided: *mut c_int) -> c_int {
        // SAFETY: `provided` is writable by contract.
        unsafe { *provided = THREAD_LEVEL.load(std::sync::atomic::Ordering::Relaxed) };
        MPI_SUCCESS
    }

    fn Is_thread_main(flag: *mut c_int) -> c_int {
        // The thread (a rank's ULT, or the program's own thread) that
        // initialized MPI; not the threads a rank started.
        let main = rank_state().and_then(|st| st.main_thread).is_some_and(|(ult, thread)| {
            // SAFETY: pthread_self has no preconditions.
            ult == mpcrs_scheduler_in_ult() && thread == unsafe { libc::pthread_self() }
        });
        // SAFETY: `flag` is writable by contract.
        unsafe { *flag = main as c_int };
        MPI_SUCCESS
    }

    fn Get_processor_name(name: *mut c_char, resultlen: *mut c_int) -> c_int {
        let mut host = [0 as c_char; 256];
        // SAFETY: gethostname writes at most the given size.
        unsafe { libc::gethostname(host.as_mut_ptr(), host.len() - 1) };
        // SAFETY: NUL-terminated by gethostname (the last byte stays 0).
        let h = unsafe { std::ffi::CStr::from_ptr(host.as_ptr()) }.to_string_lossy().into_owned();
        // SAFETY: MPI specifies a buffer of MPI_MAX_PROCESSOR_NAME bytes.
        unsafe { write_cstr(&h, name, MPI_MAX_PROCESSOR_NAME, resultlen) };
        MPI_SUCCESS
    }

    fn Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
        // SAFETY: both writable by contract.
        unsafe {
            *version = 4;
            *subversion = 0;
        }
        MPI_SUCCESS
    }

    fn Get_library_version(version: *mut c_char, resultlen: *mut c_int) -> c_int {
        let v = format!("mpcrs {} (thread-based MPI, MPICH ABI)", env!("CARGO_PKG_VERSION"));
        // SAFETY: MPI specifies a buffer of MPI_MAX_LIBRARY_VERSION_STRING bytes.
        unsafe { write_cstr(&v, version, MPI_MAX_LIBRARY_VERSION_STRING, resultlen) };
        MPI_SUCCESS
    }

    fn Pcontrol(level: c_int) -> c_int {
        // The profiling interface's hook: the level is for a tool that
        // interposes on MPI_Pcontrol; the library itself collects no profile.
        let _ = level;
        MPI_SUCCESS
    }

    fn Comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int {
        let c = tri!(comm_for("MPI_Comm_set_errhandler", comm));
        if crate::errhandler::is_user(errhandler) {
            crate::errhandler::set(&c, comm, Some(errhandler));
            return MPI_SUCCESS;
        }
        match errhandler_of(errhandler) {
            Some(h) => {
                crate::errhandler::set(&c, comm, None);
                c.set_error_handler(h);
                MPI_SUCCESS
            }
            None => fail(&c, "MPI_Comm_set_errhandler", ErrorClass::Arg, format!("invalid error handler {errhandler:#x}")),
        }
    }

    fn Comm_get_errhandler(comm: MPI_Comm, errhandler: *mut MPI_Errhandler) -> c_int {
        let c = tri!(comm_for("MPI_Comm_get_errhandler", comm));
        let h = match (crate::errhandler::of(&c), c.error_handler()) {
            (Some(user), _) => user,
            (None, ErrorHandler::Fatal) => MPI_ERRORS_ARE_FATAL,
            (None, ErrorHandler::Return) => MPI_ERRORS_RETURN,
        };
        // SAFETY: writable by contract.
        unsafe { *errhandler = h };
        MPI_SUCCESS
    }

    fn Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
        let class = match class_of(errorcode) {
            Some(c) => c as c_int,
            None => match crate::errors::user_error(errorcode) {
                Some((class, _)) => class,
                None => return ErrorClass::Arg as c_int,
            },
        };
        // SAFETY: writable by contract.
        unsafe { *errorclass = class };
        MPI_SUCCESS
    }

    fn Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int {
        let text = match (class_of(errorcode), crate::errors::user_error(errorcode)) {
            (_, Some((_, text))) => text,
            (Some(c), None) => c.name().to_string(),
            (None, None) => return ErrorClass::Arg as c_int,
        };
        // SAFETY: MPI specifies a buffer of MPI_MAX_ERROR_STRING bytes.
        unsafe { write_cstr(&text, string, MPI_MAX_ERROR_STRING, resultlen) };
        MPI_SUCCESS
    }
}

/// MPIX_Checkpoint (MPC's interface): collective over MPI_COMM_WORLD. Without
/// `mpcrs-run --checkpoint DIR` it only synchronizes and answers IGNORE; with it,
/// every rank gets CHECKPOINT once the image writer runs (or ERROR).
///
/// # Safety
/// `state` is writable.
#[no_mangle]
pub unsafe extern "C-unwind" fn MPIX_Checkpoint(state: *mut c_int) -> c_int {
    let world = tri!(world_of_caller("MPIX_Checkpoint"));
    let got = world.checkpoint();
    if !state.is_null() {
        // SAFETY: writable by contract.
        unsafe { *state = got as c_int };
    }
    MPI_SUCCESS
}

mpi_fn! {
    fn Alloc_mem(size: MPI_Aint, _info: c_int, baseptr: *mut c_void) -> c_int {
        // SAFETY: malloc of a non-negative size; `baseptr` is a `void **` per MPI.
        unsafe {
            let p = libc::malloc(size.max(1) as usize);
            if p.is_null() {
                return ErrorClass::Other as c_int;
            }
            *(baseptr as *mut *mut c_void) = p;
        }
        MPI_SUCCESS
    }

    fn Free_mem(base: *mut c_void) -> c_int {
        // SAFETY: `base` came from MPI_Alloc_mem (malloc).
        unsafe { libc::free(base) };
        MPI_SUCCESS
    }
}

mpi_leaf_fn! {
    fn Wtime() -> f64 {
        mpcrs::wtime()
    }

    fn Wtick() -> f64 {
        mpcrs::wtick()
    }
}
