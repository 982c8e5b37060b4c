//! Request completion (wait and test families, cancel, counts) and persistent
//! requests.

use std::os::raw::{c_int, c_void};

use mpcrs::raw::{self, RawRequest};
use mpcrs::ErrorClass;

use crate::datatype::{self, Staging};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::p2p::{finish, resolve};

/// What MPI_Start starts again for a persistent request.
#[derive(Clone)]
pub(crate) enum Persistent {
    Send {
        buf: *const c_void,
        count: c_int,
        t: MPI_Datatype,
        peer: c_int,
        tag: c_int,
        comm: MPI_Comm,
        mode: SendMode,
    },
    Recv {
        buf: *mut c_void,
        count: c_int,
        t: MPI_Datatype,
        peer: c_int,
        tag: c_int,
        comm: MPI_Comm,
    },
    /// A persistent collective (pcoll.rs), whose handles stay pinned until
    /// the request is freed.
    Collective(std::sync::Arc<crate::pcoll::PColl>),
}

/// The mode of a persistent send.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SendMode {
    Standard,
    Synchronous,
    /// The matching receive is posted: a standard send is correct.
    Ready,
    /// Each start sends a copy from the attached buffer (MPI_Buffer_attach).
    Buffered,
}

// SAFETY: the pointers are the program's buffers, used only by the rank that
// created the request, under MPI's buffer rules.
unsafe impl Send for Persistent {}

pub(crate) fn invalid_request(call: &'static str, h: MPI_Request) -> c_int {
    match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(
            &w,
            call,
            ErrorClass::Request,
            format!("invalid request handle {h:#x}"),
        ),
        Err(code) => code,
    }
}

/// Finishes a completed request taken out of the table: unpacks, writes the
/// status, and frees the handle (or, for a persistent request, makes it inactive).
///
/// # Safety
/// `handle` readable and writable; `status` MPI_STATUS_IGNORE or writable.
unsafe fn complete(
    handle: *mut MPI_Request,
    mut e: RequestEntry,
    st: mpcrs::Status,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: by contract.
    let h = unsafe { *handle };
    if let Some(s) = e.staging.take() {
        s.finish(st.bytes);
    }
    let comm = e.comm.clone();
    let call = e.call;
    let mut state = rank_state().expect("inside a rank");
    if let Some(g) = e.grequest {
        state.release(h);
        drop(state);
        // SAFETY: by contract.
        unsafe { *handle = MPI_REQUEST_NULL };
        // SAFETY: forwarded.
        return unsafe { g.finish(status) };
    }
    if e.persistent.is_some() {
        e.active = false;
        e.request = RawRequest::completed(mpcrs::Status::empty());
        state.put_back(h, e);
    } else {
        state.release(h);
        // SAFETY: by contract.
        unsafe { *handle = MPI_REQUEST_NULL };
    }
    drop(state);
    // SAFETY: by contract.
    unsafe { finish(&comm, call, &st, status) }
}

/// Whether a handle names nothing to wait for (null, or an inactive persistent
/// request); writes the empty status then.
///
/// # Safety
/// As [`complete`].
pub(crate) unsafe fn idle(h: MPI_Request, status: *mut MPI_Status) -> Option<bool> {
    let inactive = h == MPI_REQUEST_NULL
        || rank_state()?.with_request(h, |e| e.persistent.is_some() && !e.active)?;
    if inactive {
        // SAFETY: by contract.
        unsafe { write_status(status, &mpcrs::Status::inactive()) };
    }
    Some(inactive)
}

/// MPI_Wait.
///
/// # Safety
/// As [`complete`].
pub(crate) unsafe fn wait_one(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    // SAFETY: by contract.
    let h = unsafe { *request };
    // SAFETY: forwarded.
    match unsafe { idle(h, status) } {
        Some(true) => return MPI_SUCCESS,
        None => return invalid_request("MPI_Wait", h),
        Some(false) => {}
    }
    let Some(e) = rank_state().and_then(|mut st| st.take_request(h)) else {
        return invalid_request("MPI_Wait", h);
    };
    let st = e.request.wait();
    // SAFETY: forwarded.
    unsafe { complete(request, e, st, status) }
}

/// Status slot `i` of an array argument (or the ignore marker).
///
/// # Safety
/// `statuses` is MPI_STATUSES_IGNORE or an array with more than `i` entries.
unsafe fn status_at(statuses: *mut MPI_Status, i: usize) -> *mut MPI_Status {
    if status_ignored(statuses) {
        statuses
    } else {
        // SAFETY: by contract.
        unsafe { statuses.add(i) }
    }
}

/// Waits (`block`) or tests for some of `count` requests; completes those that are
/// done, returning their indices (None if none are active).
///
/// # Safety
/// `requests` holds `count` handles.
unsafe fn some(
    call: &'static str,
    count: c_int,
    requests: *mut MPI_Request,
    block: bool,
) -> Result<Option<Vec<usize>>, c_int> {
    let n = count.max(0) as usize;
    let mut taken: Vec<(usize, MPI_Request, RequestEntry)> = Vec::new();
    {
        let mut st = rank_state().expect("inside a rank");
        for i in 0..n {
            // SAFETY: by contract.
            let h = unsafe { *requests.add(i) };
            if h == MPI_REQUEST_NULL
                || st.with_request(h, |e| e.persistent.is_some() && !e.active) == Some(true)
            {
                continue;
            }
            match st.take_request(h) {
                Some(e) => taken.push((i, h, e)),
                None => {
                    for (_, h, e) in taken {
                        st.put_back(h, e);
                    }
                    drop(st);
                    return Err(invalid_request(call, h));
                }
            }
        }
    }
    if taken.is_empty() {
        return Ok(None);
    }
    let ready: Vec<usize> = if block {
        let refs: Vec<&RawRequest> = taken.iter().map(|(_, _, e)| &e.request).collect();
        raw::wait_some(&refs)
    } else {
        (0..taken.len())
            .filter(|&k| taken[k].2.request.test().is_some())
            .collect()
    };
    // Everything goes back under its handle; the finished ones are then completed
    // one by one by the caller (which cannot block on them any more).
    let done: Vec<usize> = ready.iter().map(|&k| taken[k].0).collect();
    let mut st = rank_state().expect("inside a rank");
    for (_, h, e) in taken {
        st.put_back(h, e);
    }
    Ok(Some(done))
}

/// Completes the already-finished request behind `requests[i]`.
///
/// # Safety
/// As [`complete`] for that entry.
unsafe fn complete_done(requests: *mut MPI_Request, i: usize, status: *mut MPI_Status) -> c_int {
    // SAFETY: forwarded; the request is complete, so waiting returns at once.
    unsafe { wait_one(requests.add(i), status) }
}

mpi_fn! {
    fn Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        unsafe { wait_one(request, status) }
    }

    fn Waitall(count: c_int, requests: *mut MPI_Request, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        unsafe { wait_all(count, requests, statuses) }
    }

    fn Waitany(count: c_int, requests: *mut MPI_Request, indx: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        match unsafe { some("MPI_Waitany", count, requests, true) } {
            Err(code) => code,
            Ok(None) => {
                // SAFETY: by contract.
                unsafe {
                    *indx = MPI_UNDEFINED;
                    write_status(status, &mpcrs::Status::inactive());
                }
                MPI_SUCCESS
            }
            Ok(Some(done)) => {
                let i = done[0];
                // SAFETY: by contract.
                unsafe {
                    *indx = i as c_int;
                    complete_done(requests, i, status)
                }
            }
        }
    }

    fn Waitsome(incount: c_int, requests: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        unsafe { some_out("MPI_Waitsome", incount, requests, outcount, indices, statuses, true) }
    }

    fn Testsome(incount: c_int, requests: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        unsafe { some_out("MPI_Testsome", incount, requests, outcount, indices, statuses, false) }
    }

    fn Test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: by contract.
        let h = unsafe { *request };
        // SAFETY: forwarded.
        match unsafe { idle(h, status) } {
            Some(true) => {
                // SAFETY: by contract.
                unsafe { *flag = 1 };
                return MPI_SUCCESS;
            }
            None => return invalid_request("MPI_Test", h),
            Some(false) => {}
        }
        let done = rank_state().and_then(|st| st.with_request(h, |e| e.request.test().is_some()));
        match done {
            None => invalid_request("MPI_Test", h),
            Some(false) => {
                // SAFETY: by contract.
                unsafe { *flag = 0 };
                // Let the other ranks of this worker run: a Test loop is a wait.
                mpcrs::yield_now();
                MPI_SUCCESS
            }
            Some(true) => {
                // SAFETY: by contract.
                unsafe { *flag = 1 };
                // SAFETY: forwarded; the request is complete, so this does not block.
                unsafe { wait_one(request, status) }
            }
        }
    }

    fn Testany(count: c_int, requests: *mut MPI_Request, indx: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        match unsafe { some("MPI_Testany", count, requests, false) } {
            Err(code) => code,
            Ok(None) => {
                // SAFETY: by contract.
                unsafe {
                    *flag = 1;
                    *indx = MPI_UNDEFINED;
                    write_status(status, &mpcrs::Status::inactive());
                }
                MPI_SUCCESS
            }
            Ok(Some(done)) if done.is_empty() => {
                // SAFETY: by contract.
                unsafe {
                    *flag = 0;
                    *indx = MPI_UNDEFINED;
                }
                mpcrs::yield_now();
                MPI_SUCCESS
            }
            Ok(Some(done)) => {
                // SAFETY: by contract.
                unsafe {
                    *flag = 1;
                    *indx = done[0] as c_int;
                    complete_done(requests, done[0], status)
                }
            }
        }
    }

    fn Testall(count: c_int, requests: *mut MPI_Request, flag: *mut c_int, statuses: *mut MPI_Status) -> c_int {
        let n = count.max(0) as usize;
        let all_done = (0..n).all(|i| {
            // SAFETY: `count` handles by contract.
            let h = unsafe { *requests.add(i) };
            h == MPI_REQUEST_NULL
                || rank_state()
                    .and_then(|st| st.with_request(h, |e| !e.active || e.request.test().is_some()))
                    .unwrap_or(true)
        });
        // SAFETY: by contract.
        unsafe { *flag = all_done as c_int };
        if !all_done {
            mpcrs::yield_now();
            return MPI_SUCCESS;
        }
        // SAFETY: every request is complete: waiting returns at once.
        unsafe { wait_all(count, requests, statuses) }
    }

    fn Request_get_status(request: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // Like MPI_Test, but the request stays as it is.
        // SAFETY: forwarded.
        match unsafe { idle(request, status) } {
            Some(true) => {
                // SAFETY: by contract.
                unsafe { *flag = 1 };
                return MPI_SUCCESS;
            }
            None => return invalid_request("MPI_Request_get_status", request),
            Some(false) => {}
        }
        let done = rank_state().and_then(|st| st.with_request(request, |e| e.request.test()));
        match done {
            None => invalid_request("MPI_Request_get_status", request),
            Some(None) => {
                // SAFETY: by contract.
                unsafe { *flag = 0 };
                mpcrs::yield_now();
                MPI_SUCCESS
            }
            Some(Some(st)) => {
                // A generalized request's status is its query function's.
                let g = rank_state().and_then(|s| s.with_request(request, |e| e.grequest)).flatten();
                // SAFETY: by contract.
                unsafe {
                    *flag = 1;
                    match g {
                        Some(g) => {
                            let (s, rc) = g.query();
                            if !status_ignored(status) {
                                *status = s;
                            }
                            return rc;
                        }
                        None => write_status(status, &st),
                    }
                }
                MPI_SUCCESS
            }
        }
    }

    fn Request_free(request: *mut MPI_Request) -> c_int {
        // SAFETY: by contract.
        let h = unsafe { *request };
        let Some(e) = rank_state().and_then(|mut st| st.take_request(h)) else {
            return invalid_request("MPI_Request_free", h);
        };
        // A persistent collective's handles are the program's again (a start
        // in flight holds its own pins).
        match &e.persistent {
            Some(Persistent::Collective(coll)) => coll.free(),
            Some(Persistent::Send { t, .. } | Persistent::Recv { t, .. }) => {
                rank_state().expect("inside a rank").unpin(*t)
            }
            None => {}
        }
        // The operation still completes, maybe only after this rank's next calls
        // (a synchronous send to itself): keep it until then, not wait for it.
        let mut st = rank_state().expect("inside a rank");
        st.release(h);
        st.freed.push(e);
        let pending = std::mem::take(&mut st.freed);
        drop(st);
        let still = finish_freed(pending, false);
        rank_state().expect("inside a rank").freed.extend(still);
        // SAFETY: by contract.
        unsafe { *request = MPI_REQUEST_NULL };
        MPI_SUCCESS
    }

    fn Cancel(request: *mut MPI_Request) -> c_int {
        // SAFETY: by contract.
        let h = unsafe { *request };
        // A generalized request: the program's cancel function, told whether
        // MPI_Grequest_complete was called.
        let g = rank_state().and_then(|st| st.with_request(h, |e| e.grequest.map(|g| (g, e.request.test().is_some())))).flatten();
        if let Some((g, complete)) = g {
            return g.cancel(complete);
        }
        let cancelled = rank_state().and_then(|st| st.with_request(h, |e| e.request.cancel(&e.comm)));
        match cancelled {
            None => invalid_request("MPI_Cancel", h),
            // A send, or a receive that already matched: it completes normally.
            Some(_) => MPI_SUCCESS,
        }
    }

    fn Test_cancelled(status: *const MPI_Status, flag: *mut c_int) -> c_int {
        // SAFETY: by contract.
        unsafe { *flag = (*status).count_hi_and_cancelled & 1 };
        MPI_SUCCESS
    }

    fn Get_count(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut c_int) -> c_int {
        let Some(ti) = datatype::info(datatype) else {
            return ErrorClass::Type as c_int;
        };
        // SAFETY: `status` readable, `count` writable by contract.
        unsafe {
            let bytes = status_bytes(&*status);
            *count = match ti.size {
                0 => 0,
                size if bytes.is_multiple_of(size as u64) => (bytes / size as u64) as c_int,
                _ => MPI_UNDEFINED,
            };
        }
        MPI_SUCCESS
    }

    fn Send_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded.
        unsafe { init_request("MPI_Send_init", Persistent::Send { buf, count, t: datatype, peer: dest, tag, comm, mode: SendMode::Standard }, request) }
    }

    fn Bsend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded.
        unsafe { init_request("MPI_Bsend_init", Persistent::Send { buf, count, t: datatype, peer: dest, tag, comm, mode: SendMode::Buffered }, request) }
    }

    fn Rsend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded.
        unsafe { init_request("MPI_Rsend_init", Persistent::Send { buf, count, t: datatype, peer: dest, tag, comm, mode: SendMode::Ready }, request) }
    }

    fn Ssend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded.
        unsafe { init_request("MPI_Ssend_init", Persistent::Send { buf, count, t: datatype, peer: dest, tag, comm, mode: SendMode::Synchronous }, request) }
    }

    fn Recv_init(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded.
        unsafe { init_request("MPI_Recv_init", Persistent::Recv { buf, count, t: datatype, peer: source, tag, comm }, request) }
    }

    fn Start(request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded.
        unsafe { start_one(request) }
    }

    fn Startall(count: c_int, requests: *mut MPI_Request) -> c_int {
        for i in 0..count.max(0) as usize {
            // SAFETY: `count` handles by contract.
            let r = unsafe { start_one(requests.add(i)) };
            if r != MPI_SUCCESS {
                return r;
            }
        }
        MPI_SUCCESS
    }
}

/// Finishes the freed requests that completed (all of them, waiting, if
/// `wait`), unpacking what they received; returns the others.
pub(crate) fn finish_freed(freed: Vec<RequestEntry>, wait: bool) -> Vec<RequestEntry> {
    let mut still = Vec::new();
    for e in freed {
        let done = if wait {
            Some(e.request.wait())
        } else {
            e.request.test()
        };
        match done {
            Some(st) => {
                if let Some(s) = e.staging {
                    s.finish(st.bytes);
                }
                // A freed generalized request: its free function, once complete.
                if let Some(g) = e.grequest {
                    g.free();
                }
            }
            None => still.push(e),
        }
    }
    still
}

/// MPI_Waitall.
///
/// # Safety
/// Arrays of `count` entries by contract.
unsafe fn wait_all(count: c_int, requests: *mut MPI_Request, statuses: *mut MPI_Status) -> c_int {
    let mut first_err = MPI_SUCCESS;
    for i in 0..count.max(0) as usize {
        // SAFETY: arrays of `count` entries by contract.
        let r = unsafe { wait_one(requests.add(i), status_at(statuses, i)) };
        if r != MPI_SUCCESS && first_err == MPI_SUCCESS {
            first_err = r;
        }
    }
    first_err
}

/// Waitsome / Testsome.
///
/// # Safety
/// Arrays of `incount` entries by contract.
unsafe fn some_out(
    call: &'static str,
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    block: bool,
) -> c_int {
    // SAFETY: forwarded.
    match unsafe { some(call, incount, requests, block) } {
        Err(code) => code,
        Ok(None) => {
            // SAFETY: by contract.
            unsafe { *outcount = MPI_UNDEFINED };
            MPI_SUCCESS
        }
        Ok(Some(done)) => {
            let mut first_err = MPI_SUCCESS;
            for (k, &i) in done.iter().enumerate() {
                // SAFETY: by contract.
                let r = unsafe {
                    *indices.add(k) = i as c_int;
                    complete_done(requests, i, status_at(statuses, k))
                };
                if r != MPI_SUCCESS && first_err == MPI_SUCCESS {
                    first_err = r;
                }
            }
            // SAFETY: by contract.
            unsafe { *outcount = done.len() as c_int };
            if done.is_empty() {
                mpcrs::yield_now();
            }
            first_err
        }
    }
}

/// Creates an inactive persistent request.
///
/// # Safety
/// `request` writable.
unsafe fn init_request(call: &'static str, p: Persistent, request: *mut MPI_Request) -> c_int {
    let (comm, count, t) = match p {
        Persistent::Send { comm, count, t, .. } | Persistent::Recv { comm, count, t, .. } => {
            (comm, count, t)
        }
        Persistent::Collective(_) => unreachable!("made by pcoll.rs"),
    };
    let (c, _, _) = tri!(resolve(call, comm, count, t));
    let mut st = rank_state().expect("inside a rank");
    // MPI lets the program free the datatype while the request lives.
    st.pin(t);
    let h = add_persistent(&mut st, c.into(), call, p);
    // SAFETY: by contract.
    unsafe { *request = h };
    MPI_SUCCESS
}

/// Records an inactive persistent request of `call` on `comm`.
pub(crate) fn add_persistent(
    st: &mut RankState,
    comm: std::sync::Arc<mpcrs::Communicator>,
    call: &'static str,
    p: Persistent,
) -> MPI_Request {
    st.add_request(RequestEntry {
        request: RawRequest::completed(mpcrs::Status::empty()),
        comm,
        call,
        staging: None,
        persistent: Some(p),
        active: false,
        grequest: None,
    })
}

/// MPI_Start of one persistent request.
///
/// # Safety
/// `request` readable; the request's buffer follows MPI's rules.
unsafe fn start_one(request: *mut MPI_Request) -> c_int {
    // SAFETY: by contract.
    let h = unsafe { *request };
    let Some(mut e) = rank_state().and_then(|mut st| st.take_request(h)) else {
        return invalid_request("MPI_Start", h);
    };
    let Some(p) = e.persistent.clone() else {
        rank_state().expect("inside a rank").put_back(h, e);
        return invalid_request("MPI_Start", h);
    };
    let started = match p {
        Persistent::Collective(coll) => Ok((coll.start(), None)),
        Persistent::Send {
            buf,
            count,
            t,
            peer,
            tag,
            comm,
            mode: SendMode::Buffered,
        } => {
            // SAFETY: the buffer holds `count` elements; the copy is made now.
            unsafe { crate::p2p::buffered_send(e.call, buf, count, t, peer, tag, comm) }
                .map(|()| (RawRequest::completed(mpcrs::Status::empty()), None))
        }
        Persistent::Send {
            buf,
            count,
            t,
            peer,
            tag,
            comm,
            mode,
        } => resolve(e.call, comm, count, t).and_then(|(c, len, ti)| {
            let sync = mode == SendMode::Synchronous;
            // SAFETY: MPI keeps the buffer untouched while the request is active.
            let (data, staging) = unsafe { Staging::send(buf.cast(), count as usize, &ti) };
            // SAFETY: as above; a packed copy moves into the request entry.
            let r = unsafe { raw::isend(&c, e.call, data, len, peer, tag, sync) };
            r.map(|r| (r, staging))
                .map_err(|err| crate::errhandler::code_on(&c, &err))
        }),
        Persistent::Recv {
            buf,
            count,
            t,
            peer,
            tag,
            comm,
        } => resolve(e.call, comm, count, t).and_then(|(c, len, ti)| {
            // SAFETY: as above.
            let (dst, staging) = unsafe { Staging::recv(buf.cast(), count as usize, &ti, false) };
            // SAFETY: as above.
            let r = unsafe { raw::irecv(&c, e.call, dst, len, peer, tag) };
            r.map(|r| (r, staging))
                .map_err(|err| crate::errhandler::code_on(&c, &err))
        }),
    };
    let result = match started {
        Ok((r, staging)) => {
            e.request = r;
            e.staging = staging;
            e.active = true;
            MPI_SUCCESS
        }
        Err(code) => code,
    };
    rank_state().expect("inside a rank").put_back(h, e);
    result
}
