//! MPI-4's error handlers of sessions: MPI_Session_create_errhandler, _get_,
//! _set_ and _call_errhandler. A session's errors go to the handler set on
//! it (or given to MPI_Session_init): MPI_ERRORS_RETURN returns the code, a
//! user handler is called with the session's handle and the code, and the
//! others end the job.

use std::os::raw::c_int;

use mpcrs::ErrorClass;

use crate::ctypes::CommErrhandlerFn;
use crate::export::mpi_fn;
use crate::handles::*;
use crate::sessions::{errhandler_of, raise, set_errhandler, MPI_Session};

/// MPI_Session_errhandler_function: the same C form as a communicator's.
pub type SessionErrhandlerFn = CommErrhandlerFn;

/// The error for a handle that names no session (fatal: no session's
/// handler can say otherwise).
fn no_session(call: &'static str, h: MPI_Session) -> c_int {
    raise(
        MPI_ERRORS_ARE_FATAL,
        call,
        ErrorClass::Session,
        format!("invalid session handle {h:#x}"),
    )
}

/// Whether `eh` is an error handler a session can have.
fn valid(eh: MPI_Errhandler) -> bool {
    matches!(
        eh,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT
    ) || crate::errhandler::is_user(eh)
}

mpi_fn! {
    fn Session_create_errhandler(session_errhandler_fn: Option<SessionErrhandlerFn>, errhandler: *mut MPI_Errhandler) -> c_int {
        let call = "MPI_Session_create_errhandler";
        let Some(f) = session_errhandler_fn else {
            return raise(MPI_ERRORS_ARE_FATAL, call, ErrorClass::Arg, "the error handler function is NULL".into());
        };
        match crate::errhandler::register(f) {
            Some(h) => {
                // SAFETY: writable by contract.
                unsafe { *errhandler = h };
                MPI_SUCCESS
            }
            None => raise(MPI_ERRORS_ARE_FATAL, call, ErrorClass::Other, "called outside an MPI rank".into()),
        }
    }

    fn Session_get_errhandler(session: MPI_Session, errhandler: *mut MPI_Errhandler) -> c_int {
        let Some(eh) = errhandler_of(session) else {
            return no_session("MPI_Session_get_errhandler", session);
        };
        // SAFETY: writable by contract.
        unsafe { *errhandler = eh };
        MPI_SUCCESS
    }

    fn Session_set_errhandler(session: MPI_Session, errhandler: MPI_Errhandler) -> c_int {
        let call = "MPI_Session_set_errhandler";
        let Some(old) = errhandler_of(session) else {
            return no_session(call, session);
        };
        if !valid(errhandler) {
            return raise(old, call, ErrorClass::Arg, format!("invalid error handler {errhandler:#x}"));
        }
        set_errhandler(session, errhandler);
        MPI_SUCCESS
    }

    fn Session_call_errhandler(session: MPI_Session, errorcode: c_int) -> c_int {
        let call = "MPI_Session_call_errhandler";
        let Some(eh) = errhandler_of(session) else {
            return no_session(call, session);
        };
        let mut h = session;
        let handle: *mut MPI_Session = &mut h;
        if crate::errhandler::call_with(eh, handle.cast(), errorcode).is_some() {
            return MPI_SUCCESS;
        }
        let class = crate::env::class_of(errorcode).unwrap_or(ErrorClass::Unknown);
        // Fatal handlers end the job here; MPI_ERRORS_RETURN makes this a no-op.
        raise(eh, call, class, format!("error code {errorcode} raised by the program"));
        MPI_SUCCESS
    }
}
