//! Generalized requests made from Fortran (MPI_GREQUEST_START): the query,
//! free and cancel procedures have Fortran interfaces (everything by
//! reference, `ierror` instead of a result, the extra state an
//! INTEGER(KIND=MPI_ADDRESS_KIND)), so the C request gets trampolines that
//! call them, with the procedures and the extra state behind its own extra
//! state; the free trampoline lets go of them. The procedures get the
//! program's own extra-state variable, by reference, as with MPICH: what they
//! write to it (a count of calls, say) the program sees.

use std::os::raw::{c_int, c_void};

use super::set_ierror;

/// (extra_state, status, ierror).
type QueryFn = unsafe extern "C" fn(*mut i64, *mut c_int, *mut c_int);
/// (extra_state, ierror).
type FreeFn = unsafe extern "C" fn(*mut i64, *mut c_int);
/// (extra_state, complete, ierror).
type CancelFn = unsafe extern "C" fn(*mut i64, *const c_int, *mut c_int);

struct Procedures {
    query: QueryFn,
    free: FreeFn,
    cancel: CancelFn,
    /// The program's variable given to MPI_GREQUEST_START.
    extra: *mut i64,
}

unsafe extern "C" fn query_trampoline(extra: *mut c_void, status: *mut c_void) -> c_int {
    // SAFETY: `extra` is the box of `start`, alive until free_trampoline;
    // `status` is an MPI_Status, five INTEGERs as Fortran's.
    unsafe {
        let p = &*(extra as *const Procedures);
        let mut ierror = 0;
        (p.query)(p.extra, status.cast(), &mut ierror);
        ierror
    }
}

unsafe extern "C" fn free_trampoline(extra: *mut c_void) -> c_int {
    // SAFETY: the box of `start`; MPI calls free once, last.
    unsafe {
        let p = Box::from_raw(extra as *mut Procedures);
        let mut ierror = 0;
        (p.free)(p.extra, &mut ierror);
        ierror
    }
}

unsafe extern "C" fn cancel_trampoline(extra: *mut c_void, complete: c_int) -> c_int {
    // SAFETY: the box of `start`, alive until free_trampoline.
    unsafe {
        let p = &*(extra as *const Procedures);
        let mut ierror = 0;
        (p.cancel)(p.extra, &complete, &mut ierror);
        ierror
    }
}

type CQuery = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type CFree = unsafe extern "C" fn(*mut c_void) -> c_int;
type CCancel = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
type CStart = unsafe extern "C" fn(CQuery, CFree, CCancel, *mut c_void, *mut c_int) -> c_int;

extern "C" {
    fn MPI_Grequest_start(q: CQuery, f: CFree, c: CCancel, e: *mut c_void, r: *mut c_int) -> c_int;
    fn PMPI_Grequest_start(q: CQuery, f: CFree, c: CCancel, e: *mut c_void, r: *mut c_int)
        -> c_int;
}

/// MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra_state, request, ierror).
///
/// # Safety
/// The Fortran arguments of that call.
unsafe fn start(
    c_start: CStart,
    procedures: (QueryFn, FreeFn, CancelFn),
    extra: *mut i64,
    request: *mut c_int,
    ierror: *mut c_int,
) {
    let (query, free, cancel) = procedures;
    let boxed = Box::into_raw(Box::new(Procedures {
        query,
        free,
        cancel,
        extra,
    }));
    // SAFETY: trampolines of C's signatures, and the box they expect.
    let rc = unsafe {
        c_start(
            query_trampoline,
            free_trampoline,
            cancel_trampoline,
            boxed.cast(),
            request,
        )
    };
    if rc != 0 {
        // SAFETY: no request refers to the box.
        drop(unsafe { Box::from_raw(boxed) });
    }
    // SAFETY: `ierror` is the Fortran INTEGER.
    unsafe { set_ierror(ierror, rc) };
}

both! {
    fn mpi_grequest_start_ / pmpi_grequest_start_(
        query: QueryFn,
        free: FreeFn,
        cancel: CancelFn,
        extra: *mut i64,
        request: *mut c_int,
        ierror: *mut c_int
    ) calls call = MPI_Grequest_start / PMPI_Grequest_start {
        start(call, (query, free, cancel), extra, request, ierror)
    }
}
