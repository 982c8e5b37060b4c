//! Non-blocking operations in safe Rust: requests borrow their buffers for a scope,
//! and the scope does not end before every request started in it has completed, so
//! a buffer can never be freed or reused under an operation in flight, even if a
//! request is leaked.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::error::{Error, ErrorClass, ErrorHandler, Result};
use crate::request::{wait_some, Completion, Pending, Status};

/// The region in which non-blocking operations may borrow buffers.
pub struct Scope<'scope, 'env: 'scope> {
    in_flight: RefCell<Vec<Arc<Completion>>>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// Runs `f` with a [`Scope`]; returns after every operation started in it finished.
///
/// A buffer lent to a request cannot be touched until the scope ends:
///
/// ```compile_fail
/// mpcrs::run(|world| {
///     let mut buf = [0u8; 4];
///     mpcrs::scope(|s| {
///         let r = world.irecv(s, &mut buf, 0, 0).unwrap();
///         buf[0] = 1; // error: `buf` is mutably borrowed by the receive
///         r.wait().unwrap();
///     });
/// });
/// ```
///
/// while reading it after the scope is fine:
///
/// ```no_run
/// mpcrs::run(|world| {
///     let mut buf = [0u8; 4];
///     mpcrs::scope(|s| {
///         let _r = world.irecv(s, &mut buf, 0, 0).unwrap();
///     });
///     println!("{buf:?}");
/// });
/// ```
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    let s = Scope {
        in_flight: RefCell::new(Vec::new()),
        _scope: PhantomData,
        _env: PhantomData,
    };
    // Waits even if `f` panics: the borrowed buffers outlive every operation.
    struct WaitOnExit<'a, 's, 'e>(&'a Scope<'s, 'e>);
    impl Drop for WaitOnExit<'_, '_, '_> {
        fn drop(&mut self) {
            let all = std::mem::take(&mut *self.0.in_flight.borrow_mut());
            for c in all {
                c.wait();
            }
        }
    }
    let guard = WaitOnExit(&s);
    let out = f(&s);
    drop(guard);
    out
}

impl<'scope> Scope<'scope, '_> {
    pub(crate) fn track(&self, p: &Pending) {
        if let Pending::Waiting(c) = p {
            self.in_flight.borrow_mut().push(c.clone());
        }
        // Drop finished entries now and then so long loops don't grow the list.
        let mut v = self.in_flight.borrow_mut();
        if v.len() >= 64 && v.len().is_power_of_two() {
            v.retain(|c| !c.is_done());
        }
    }
}

/// A non-blocking operation in flight (MPI_Request).
#[must_use = "a request does nothing unless waited for or tested; the scope waits for it at its end"]
pub struct Request<'scope> {
    pub(crate) pending: Pending,
    pub(crate) call: &'static str,
    pub(crate) world_rank: i32,
    pub(crate) errhandler: ErrorHandler,
    pub(crate) _buf: PhantomData<&'scope mut [u8]>,
}

impl Request<'_> {
    fn finish(&self, st: Status) -> Result<Status> {
        if st.error == ErrorClass::Success {
            Ok(st)
        } else {
            self.errhandler.handle(Err(Error::new(
                st.error,
                self.call,
                self.world_rank,
                format!(
                    "message of {} bytes from rank {} (tag {}) did not fit the receive buffer",
                    st.bytes, st.source, st.tag
                ),
            )))
        }
    }

    /// MPI_Wait.
    pub fn wait(self) -> Result<Status> {
        let st = match &self.pending {
            Pending::Done(s) => *s,
            Pending::Waiting(c) => c.wait(),
        };
        self.finish(st)
    }

    /// MPI_Test: the status once finished.
    pub fn test(&self) -> Option<Result<Status>> {
        self.pending.test().map(|st| self.finish(st))
    }

    pub fn is_complete(&self) -> bool {
        self.pending.test().is_some()
    }
}

/// MPI_Waitall: statuses in request order; the first error is returned (under
/// MPI_ERRORS_RETURN) after all requests finished.
pub fn wait_all(requests: Vec<Request<'_>>) -> Result<Vec<Status>> {
    let mut out = Vec::with_capacity(requests.len());
    let mut first_err = None;
    for r in requests {
        match r.wait() {
            Ok(s) => out.push(s),
            Err(e) => {
                first_err.get_or_insert(e);
                out.push(Status::empty());
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// MPI_Waitany: removes one finished request from `requests` and returns its
/// original index and status. `None` if `requests` is empty.
pub fn wait_any(requests: &mut Vec<Request<'_>>) -> Option<Result<(usize, Status)>> {
    if requests.is_empty() {
        return None;
    }
    let refs: Vec<&Pending> = requests.iter().map(|r| &r.pending).collect();
    let i = wait_some(&refs)[0];
    let r = requests.remove(i);
    Some(r.wait().map(|s| (i, s)))
}

/// MPI_Waitsome: removes every finished request (at least one) and returns their
/// indices (as they were before removal) and statuses.
pub fn wait_some_of(requests: &mut Vec<Request<'_>>) -> Result<Vec<(usize, Status)>> {
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let refs: Vec<&Pending> = requests.iter().map(|r| &r.pending).collect();
    let ready = wait_some(&refs);
    take_indices(requests, ready)
}

/// MPI_Testsome: like [`wait_some_of`] but returns at once (possibly with nothing).
pub fn test_some(requests: &mut Vec<Request<'_>>) -> Result<Vec<(usize, Status)>> {
    let ready: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_complete())
        .map(|(i, _)| i)
        .collect();
    take_indices(requests, ready)
}

/// MPI_Testany: one finished request, removed, with its index.
pub fn test_any(requests: &mut Vec<Request<'_>>) -> Option<Result<(usize, Status)>> {
    let i = requests.iter().position(|r| r.is_complete())?;
    let r = requests.remove(i);
    Some(r.wait().map(|s| (i, s)))
}

/// MPI_Testall: all statuses if every request finished, else `None` (nothing removed).
pub fn test_all(requests: &mut Vec<Request<'_>>) -> Option<Result<Vec<Status>>> {
    if requests.iter().all(|r| r.is_complete()) {
        Some(wait_all(std::mem::take(requests)))
    } else {
        None
    }
}

fn take_indices(
    requests: &mut Vec<Request<'_>>,
    mut idx: Vec<usize>,
) -> Result<Vec<(usize, Status)>> {
    idx.sort_unstable();
    let mut out = Vec::with_capacity(idx.len());
    for &i in idx.iter().rev() {
        let r = requests.remove(i);
        out.push((i, r.wait()?));
    }
    out.reverse();
    Ok(out)
}
