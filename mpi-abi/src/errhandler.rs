//! User error handlers on communicators (MPI_Comm_create_errhandler, MPI-1's
//! MPI_Errhandler_create): a handler set on a communicator is called with the
//! communicator's handle and the error code of every error raised on it, and
//! the call then returns the code. The runtime's own handler of such a
//! communicator is ERRORS_RETURN, so its errors come back to be passed on.

use std::collections::HashMap;
use std::os::raw::c_int;

use mpcrs::{Communicator, ErrorClass, ErrorHandler};

use crate::ctypes::{CommErrhandlerFn, MPI_File};
use crate::export::{mpi_fn, tri};
use crate::handles::*;

/// Handles of user error handlers: MPICH's kind bits for error handlers in
/// its direct range, then an index.
const ERRHANDLER_USER: MPI_Errhandler = 0x9400_0000u32 as c_int;
const INDEX_MASK: c_int = 0x03ff_ffff;

/// One rank's user error handlers and where they are set. Behind a lock of
/// its own, apart from the rank's tables: errors are raised from places that
/// hold those.
#[derive(Default)]
pub(crate) struct Table {
    functions: Vec<Function>,
    /// Communicator object (its address, as every handle of it shares the
    /// object) -> (its handle, the handler's handle).
    by_comm: HashMap<usize, (MPI_Comm, MPI_Errhandler)>,
}

/// A user error handler's function and how it takes the object's handle.
#[derive(Clone, Copy)]
pub(crate) enum Function {
    /// C's: a pointer to the object's C handle.
    C(CommErrhandlerFn),
    /// A Fortran procedure made by MPI_FILE_CREATE_ERRHANDLER: a pointer to
    /// the file's Fortran handle (an INTEGER; C's MPI_File is a pointer).
    FortranFile(CommErrhandlerFn),
}

impl Function {
    fn pointer(self) -> CommErrhandlerFn {
        match self {
            Function::C(f) | Function::FortranFile(f) => f,
        }
    }
}

fn key(c: &Communicator) -> usize {
    c as *const Communicator as usize
}

impl Table {
    fn function(&self, h: MPI_Errhandler) -> Option<Function> {
        if h & !INDEX_MASK != ERRHANDLER_USER {
            return None;
        }
        self.functions.get((h & INDEX_MASK) as usize).copied()
    }
}

/// Whether `h` names a user error handler of this rank.
pub(crate) fn is_user(h: MPI_Errhandler) -> bool {
    errhandler_table().is_some_and(|t| t.function(h).is_some())
}

/// Sets (`Some`) or clears the user handler of communicator `comm` (handle `h`).
pub(crate) fn set(c: &Communicator, h: MPI_Comm, eh: Option<MPI_Errhandler>) {
    let mut t = errhandler_table().expect("inside a rank");
    match eh {
        Some(eh) => {
            t.by_comm.insert(key(c), (h, eh));
            c.set_error_handler(ErrorHandler::Return);
        }
        None => {
            t.by_comm.remove(&key(c));
        }
    }
}

/// The user handler set on `c`, if any.
pub(crate) fn of(c: &Communicator) -> Option<MPI_Errhandler> {
    errhandler_table()?.by_comm.get(&key(c)).map(|&(_, eh)| eh)
}

/// A new duplicate `new` (handle `h`) of `old` keeps `old`'s user handler.
pub(crate) fn inherit(old: &Communicator, new: &Communicator, h: MPI_Comm) {
    if let Some(eh) = of(old) {
        set(new, h, Some(eh));
    }
}

/// Calls the user handler set on `c` with `code`, if there is one, and
/// returns the code it left (the handler may change it).
pub(crate) fn call_user(c: &Communicator, code: c_int) -> Option<c_int> {
    let (mut h, f) = {
        let t = errhandler_table()?;
        let &(h, eh) = t.by_comm.get(&key(c))?;
        (h, t.function(eh)?.pointer())
    };
    let mut code = code;
    // SAFETY: the program's MPI_Comm_errhandler_function, called as MPI
    // specifies: the communicator's handle and the error code, by pointer.
    unsafe { f(&mut h, &mut code) };
    Some(code)
}

/// Calls user handler `eh` with a pointer to the handle of the object the
/// error was raised on (a file's, whose handle is not an int) and `code`;
/// returns the code it left, or `None` if `eh` is no user handler.
pub(crate) fn call_with(
    eh: MPI_Errhandler,
    handle: *mut std::ffi::c_void,
    code: c_int,
) -> Option<c_int> {
    let f = errhandler_table()?.function(eh)?;
    let mut code = code;
    match f {
        // SAFETY: the program's error handler function, called as MPI
        // specifies: the object's handle and the error code, by pointer.
        Function::C(f) => unsafe { f(handle.cast(), &mut code) },
        Function::FortranFile(f) => {
            // SAFETY: handlers made for files are only called for files:
            // `handle` points to an MPI_File.
            let mut fh = crate::files::to_fortran(unsafe { *(handle as *const MPI_File) });
            // SAFETY: the program's Fortran procedure, both arguments by reference.
            unsafe { f((&mut fh as *mut c_int).cast(), &mut code) };
        }
    }
    Some(code)
}

/// A runtime error raised on `c`: passed to its user handler, if any; the code.
pub(crate) fn code_on(c: &Communicator, e: &mpcrs::Error) -> c_int {
    call_user(c, e.class as c_int).unwrap_or(e.class as c_int)
}

/// A runtime result on `c` as a return code, errors passed to `c`'s user handler.
pub(crate) fn ret_on(c: &Communicator, r: mpcrs::Result<()>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => code_on(c, &e),
    }
}

pub(crate) fn create(
    call: &'static str,
    f: Option<CommErrhandlerFn>,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    create_as(call, f.map(Function::C), errhandler)
}

/// Creates a user handler of function `f`, taking handles as `f` says.
pub(crate) fn create_as(
    call: &'static str,
    f: Option<Function>,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    let Some(f) = f else {
        let w = tri!(comm_for(call, MPI_COMM_WORLD));
        return fail(
            &w,
            call,
            ErrorClass::Arg,
            "the error handler function is NULL".into(),
        );
    };
    // Only between MPI_Init and MPI_Finalize.
    let _world = tri!(comm_for(call, MPI_COMM_WORLD));
    let mut t = errhandler_table().expect("inside a rank");
    t.functions.push(f);
    let h = ERRHANDLER_USER | (t.functions.len() - 1) as c_int;
    // SAFETY: writable by contract.
    unsafe { *errhandler = h };
    MPI_SUCCESS
}

/// Records user handler `f` (of any object kind: the functions have one C
/// form) without requiring MPI_Init: sessions make theirs before or
/// without it. `None` outside an MPI rank.
pub(crate) fn register(f: CommErrhandlerFn) -> Option<MPI_Errhandler> {
    let mut t = errhandler_table()?;
    t.functions.push(Function::C(f));
    Some(ERRHANDLER_USER | (t.functions.len() - 1) as c_int)
}

mpi_fn! {
    fn Comm_create_errhandler(comm_errhandler_fn: Option<CommErrhandlerFn>, errhandler: *mut MPI_Errhandler) -> c_int {
        create("MPI_Comm_create_errhandler", comm_errhandler_fn, errhandler)
    }

    fn Errhandler_create(comm_errhandler_fn: Option<CommErrhandlerFn>, errhandler: *mut MPI_Errhandler) -> c_int {
        create("MPI_Errhandler_create", comm_errhandler_fn, errhandler)
    }
}
