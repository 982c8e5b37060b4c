//! Threads a rank starts (MPI_THREAD_MULTIPLE): a privatized program's
//! pthread_create and pthread_join reach these (interpose.rs explains how), and
//! so do those of the libraries copied per rank (OpenMP's libgomp). A new
//! thread acts for the rank that started it, so its MPI calls are that rank's,
//! and gets the program's thread-local variables (program_tls.rs); a rank's
//! ULT joining a thread waits on the blocking pool instead of holding its
//! worker, whose other ranks may be the ones the thread waits for. Threads the
//! shared system libraries start (libstdc++'s std::thread) call libc's
//! functions directly and carry no rank.

use std::os::raw::{c_int, c_void};

use crate::interpose::real;

type StartRoutine = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type PthreadCreate = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    StartRoutine,
    *mut c_void,
) -> c_int;
type PthreadJoin = unsafe extern "C" fn(libc::pthread_t, *mut *mut c_void) -> c_int;

/// What the new thread runs, and for which rank (none: a thread started by
/// one that acts for no rank).
struct Start {
    rank: Option<i32>,
    routine: StartRoutine,
    arg: *mut c_void,
}

unsafe extern "C" fn start_for_rank(p: *mut c_void) -> *mut c_void {
    // SAFETY: `p` is the Box pthread_create below leaked for this thread alone.
    let start = unsafe { Box::from_raw(p.cast::<Start>()) };
    crate::program_tls::enter_thread(start.rank.map(|r| r as usize));
    if let Some(rank) = start.rank {
        mpcrs::raw::act_as_rank(rank);
    }
    // SAFETY: the program's own start routine with its own argument.
    unsafe { (start.routine)(start.arg) }
}

/// # Safety
/// As pthread_create(3).
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    routine: StartRoutine,
    arg: *mut c_void,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let create = real!("pthread_create": PthreadCreate);
    let rank = mpcrs::raw::acting_rank();
    if rank.is_none() && !crate::program_tls::program_has_tls() {
        // SAFETY: the caller's arguments, as libc takes them.
        return unsafe { create(thread, attr, routine, arg) };
    }
    let start = Box::into_raw(Box::new(Start { rank, routine, arg }));
    // SAFETY: as above; `start` is handed to the new thread.
    let r = unsafe { create(thread, attr, start_for_rank, start.cast()) };
    if r != 0 {
        // SAFETY: no thread took it.
        drop(unsafe { Box::from_raw(start) });
    }
    r
}

/// # Safety
/// As pthread_join(3).
#[no_mangle]
pub unsafe extern "C" fn pthread_join(thread: libc::pthread_t, retval: *mut *mut c_void) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let join = real!("pthread_join": PthreadJoin);
    if !mpcrs::raw::in_ult() {
        // SAFETY: the caller's arguments.
        return unsafe { join(thread, retval) };
    }
    // The result travels as an address: the pool thread joins, the ULT waits parked.
    let out = retval as usize;
    mpcrs_scheduler::run_blocking(move || {
        // SAFETY: `retval` is the caller's, which waits for this call.
        unsafe { join(thread, out as *mut *mut c_void) }
    })
}
