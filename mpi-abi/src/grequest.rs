//! Generalized requests (MPI_Grequest_start, MPI_Grequest_complete): requests
//! the program completes itself, from any thread. The waits and tests of
//! requests.rs finish them like the others, calling the program's query
//! function for the status and its free function when the handle goes;
//! MPI_Cancel calls its cancel function.

use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use mpcrs::raw::{self, Completer};
use mpcrs::ErrorClass;

use crate::ctypes::{GrequestCancelFn, GrequestFreeFn, GrequestQueryFn};
use crate::export::{mpi_fn, tri};
use crate::handles::*;

/// The bit that marks a generalized request's handle among request handles:
/// the rest is a number unique in the process.
const GREQUEST_BIT: c_int = 0x0200_0000;

/// The completing side of every generalized request not completed yet, by
/// handle: MPI_Grequest_complete may come from a thread that is no rank.
static PENDING: Mutex<Option<HashMap<MPI_Request, Completer>>> = Mutex::new(None);
static NEXT: AtomicU32 = AtomicU32::new(0);

/// Whether `h` is the handle of a generalized request.
pub(crate) fn is_grequest(h: MPI_Request) -> bool {
    h & !INDEX_MASK == REQUEST_USER && h & GREQUEST_BIT != 0
}

/// The program's functions of one generalized request and their state.
#[derive(Clone, Copy)]
pub(crate) struct Callbacks {
    query: Option<GrequestQueryFn>,
    free: Option<GrequestFreeFn>,
    cancel: Option<GrequestCancelFn>,
    extra: *mut c_void,
}

// SAFETY: `extra` is the program's state, handed back only to its own
// functions, by the rank that owns the request.
unsafe impl Send for Callbacks {}

impl Callbacks {
    /// The status the query function gives (MPI_SUCCESS and a status of no
    /// data without one), and its return code.
    pub(crate) fn query(&self) -> (MPI_Status, c_int) {
        let mut st = MPI_Status {
            MPI_SOURCE: mpcrs::ANY_SOURCE,
            MPI_TAG: mpcrs::ANY_TAG,
            ..Default::default()
        };
        let rc = match self.query {
            // SAFETY: the program's MPI_Grequest_query_function with its state.
            Some(f) => unsafe { f(self.extra, &mut st) },
            None => MPI_SUCCESS,
        };
        (st, rc)
    }

    /// Calls the free function (the request's handle is gone); its code.
    pub(crate) fn free(&self) -> c_int {
        match self.free {
            // SAFETY: the program's MPI_Grequest_free_function with its state.
            Some(f) => unsafe { f(self.extra) },
            None => MPI_SUCCESS,
        }
    }

    /// Calls the cancel function; `complete`: MPI_Grequest_complete was called.
    pub(crate) fn cancel(&self, complete: bool) -> c_int {
        match self.cancel {
            // SAFETY: the program's MPI_Grequest_cancel_function with its state.
            Some(f) => unsafe { f(self.extra, complete as c_int) },
            None => MPI_SUCCESS,
        }
    }

    /// Finishes a completed request whose handle goes: the query function
    /// fills `status`, then the free function runs. The first error of the two.
    ///
    /// # Safety
    /// `status` is MPI_STATUS_IGNORE or writable.
    pub(crate) unsafe fn finish(&self, status: *mut MPI_Status) -> c_int {
        let (st, q) = self.query();
        if !status_ignored(status) {
            // SAFETY: by contract.
            unsafe { *status = st };
        }
        let f = self.free();
        let rc = if q != MPI_SUCCESS { q } else { f };
        if rc == MPI_SUCCESS && st.MPI_ERROR != MPI_SUCCESS {
            st.MPI_ERROR
        } else {
            rc
        }
    }
}

mpi_fn! {
    fn Grequest_start(query_fn: Option<GrequestQueryFn>, free_fn: Option<GrequestFreeFn>, cancel_fn: Option<GrequestCancelFn>, extra_state: *mut c_void, request: *mut MPI_Request) -> c_int {
        let c = tri!(comm_for("MPI_Grequest_start", MPI_COMM_WORLD));
        let h = REQUEST_USER | GREQUEST_BIT | (NEXT.fetch_add(1, Ordering::Relaxed) as c_int & (GREQUEST_BIT - 1));
        let (req, completer) = raw::manual_request();
        PENDING.lock().unwrap().get_or_insert_with(HashMap::new).insert(h, completer);
        rank_state().expect("inside a rank").add_grequest(h, RequestEntry {
            request: req,
            comm: Arc::from(c),
            call: "MPI_Grequest_start",
            staging: None,
            persistent: None,
            active: true,
            grequest: Some(Callbacks { query: query_fn, free: free_fn, cancel: cancel_fn, extra: extra_state }),
        });
        // SAFETY: writable by contract.
        unsafe { *request = h };
        MPI_SUCCESS
    }

    fn Grequest_complete(request: MPI_Request) -> c_int {
        let completer = PENDING.lock().unwrap().as_mut().and_then(|m| m.remove(&request));
        match completer {
            Some(c) => {
                // The status comes from the query function when the request is finished.
                c.complete(mpcrs::Status::empty());
                MPI_SUCCESS
            }
            // From a rank: through MPI_COMM_WORLD's handler; from another
            // thread, the code alone.
            None if mpcrs::current_rank().is_some() => crate::requests::invalid_request("MPI_Grequest_complete", request),
            None => ErrorClass::Request as c_int,
        }
    }
}
