//! Point-to-point calls and requests.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use mpcrs::raw;
use mpcrs::{Communicator, ErrorClass};

use crate::datatype::{self, Staging, TypeInfo};
use crate::export::mpi_fn;
use crate::handles::*;

/// Resolves the communicator and the (packed) byte size of (count, datatype).
pub(crate) fn resolve(
    call: &'static str,
    comm: MPI_Comm,
    count: c_int,
    t: MPI_Datatype,
) -> Result<(Arc<Communicator>, usize, TypeInfo), c_int> {
    let c = comm_for(call, comm)?;
    match datatype::describe(count, t) {
        Ok((len, ti)) => Ok((c, len, ti)),
        Err((class, detail)) => Err(fail(&c, call, class, detail)),
    }
}

/// Finishes a completed operation: status out, truncation through the handler.
///
/// # Safety
/// `status` is MPI_STATUS_IGNORE or writable.
unsafe fn finish(
    comm: &Communicator,
    call: &'static str,
    st: &mpcrs::Status,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { write_status(status, st) };
    ret(raw::status_error(comm, call, st))
}

fn start(
    call: &'static str,
    comm: Arc<Communicator>,
    r: mpcrs::Result<raw::RawRequest>,
    staging: Option<Staging>,
    request: *mut MPI_Request,
) -> c_int {
    match r {
        Ok(req) => {
            let h = rank_state()
                .expect("inside a rank")
                .add_request(RequestEntry {
                    request: req,
                    comm,
                    call,
                    staging,
                });
            // SAFETY: writable by the callers' contract.
            unsafe { *request = h };
            MPI_SUCCESS
        }
        Err(e) => code(&e),
    }
}

unsafe fn send_impl(
    call: &'static str,
    buf: *const c_void,
    count: c_int,
    t: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    sync: bool,
) -> c_int {
    let (c, len, ti) = match resolve(call, comm, count, t) {
        Ok(x) => x,
        Err(code) => return code,
    };
    // SAFETY: the C caller keeps `buf` valid for count elements during the call.
    let (data, _staged) = unsafe { Staging::send(buf.cast(), count as usize, &ti) };
    // SAFETY: `data` is the buffer or its packed copy, alive until we return.
    match unsafe { raw::isend(&c, call, data, len, dest, tag, sync) } {
        Ok(r) => {
            r.wait();
            MPI_SUCCESS
        }
        Err(e) => code(&e),
    }
}

/// Completes the request behind `*request` (waiting), frees it, and writes the status.
///
/// # Safety
/// `request` readable and writable; `status` MPI_STATUS_IGNORE or writable.
pub(crate) unsafe fn wait_one(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    // SAFETY: by contract.
    let h = unsafe { *request };
    if h == MPI_REQUEST_NULL {
        // SAFETY: by contract.
        unsafe { write_status(status, &mpcrs::Status::empty()) };
        return MPI_SUCCESS;
    }
    let Some(e) = rank_state().and_then(|mut st| st.take_request(h)) else {
        return invalid_request("MPI_Wait", h);
    };
    let st = e.request.wait();
    if let Some(s) = e.staging {
        s.finish(st.bytes);
    }
    // SAFETY: by contract.
    unsafe { *request = MPI_REQUEST_NULL };
    // SAFETY: by contract.
    unsafe { finish(&e.comm, e.call, &st, status) }
}

fn invalid_request(call: &'static str, h: MPI_Request) -> c_int {
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

mpi_fn! {
    fn Send(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { send_impl("MPI_Send", buf, count, datatype, dest, tag, comm, false) }
    }

    fn Ssend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { send_impl("MPI_Ssend", buf, count, datatype, dest, tag, comm, true) }
    }

    fn Recv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let (c, len, ti) = match resolve("MPI_Recv", comm, count, datatype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        // SAFETY: the C caller lends `buf` for count elements during the call.
        let (dst, staged) = unsafe { Staging::recv(buf.cast(), count as usize, &ti, false) };
        // SAFETY: `dst` is the buffer or a staging area of `len` bytes.
        match unsafe { raw::recv(&c, "MPI_Recv", dst, len, source, tag) } {
            Ok(st) => {
                if let Some(s) = staged {
                    s.finish(st.bytes);
                }
                // SAFETY: `status` by contract.
                unsafe { finish(&c, "MPI_Recv", &st, status) }
            }
            Err(e) => code(&e),
        }
    }

    fn Isend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (c, len, ti) = match resolve("MPI_Isend", comm, count, datatype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        // SAFETY: MPI forbids touching `buf` until the request completes.
        let (data, staged) = unsafe { Staging::send(buf.cast(), count as usize, &ti) };
        // SAFETY: MPI forbids touching `buf` until the request completes.
        let r = unsafe { raw::isend(&c, "MPI_Isend", data, len, dest, tag, false) };
        start("MPI_Isend", c, r, staged, request)
    }

    fn Issend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (c, len, ti) = match resolve("MPI_Issend", comm, count, datatype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        // SAFETY: MPI forbids touching `buf` until the request completes.
        let (data, staged) = unsafe { Staging::send(buf.cast(), count as usize, &ti) };
        // SAFETY: as MPI_Isend.
        let r = unsafe { raw::isend(&c, "MPI_Issend", data, len, dest, tag, true) };
        start("MPI_Issend", c, r, staged, request)
    }

    fn Irecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (c, len, ti) = match resolve("MPI_Irecv", comm, count, datatype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        // SAFETY: MPI forbids touching `buf` until the request completes.
        let (dst, staged) = unsafe { Staging::recv(buf.cast(), count as usize, &ti, false) };
        // SAFETY: `dst` stays valid: the staging moves into the request entry.
        let r = unsafe { raw::irecv(&c, "MPI_Irecv", dst, len, source, tag) };
        start("MPI_Irecv", c, r, staged, request)
    }

    fn Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let (c, slen, sti) = match resolve("MPI_Sendrecv", comm, sendcount, sendtype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        let (_, rlen, rti) = match resolve("MPI_Sendrecv", comm, recvcount, recvtype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        // SAFETY: both buffers lent for the call.
        let (sdata, _sstaged) = unsafe { Staging::send(sendbuf.cast(), sendcount as usize, &sti) };
        // SAFETY: as above.
        let (rdata, rstaged) = unsafe { Staging::recv(recvbuf.cast(), recvcount as usize, &rti, false) };
        // SAFETY: both areas live until we return.
        let r = unsafe { raw::irecv(&c, "MPI_Sendrecv", rdata, rlen, source, recvtag) };
        let r = match r {
            Ok(r) => r,
            Err(e) => return code(&e),
        };
        // SAFETY: as above.
        match unsafe { raw::isend(&c, "MPI_Sendrecv", sdata, slen, dest, sendtag, false) } {
            Ok(s) => {
                s.wait();
            }
            Err(e) => {
                r.wait();
                return code(&e);
            }
        }
        let st = r.wait();
        if let Some(s) = rstaged {
            s.finish(st.bytes);
        }
        // SAFETY: `status` by contract.
        unsafe { finish(&c, "MPI_Sendrecv", &st, status) }
    }

    fn Probe(source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let c = match comm_for("MPI_Probe", comm) {
            Ok(c) => c,
            Err(code) => return code,
        };
        match raw::probe(&c, "MPI_Probe", source, tag, true) {
            Ok(st) => {
                // SAFETY: by contract.
                unsafe { write_status(status, &st.expect("blocking probe")) };
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Iprobe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        let c = match comm_for("MPI_Iprobe", comm) {
            Ok(c) => c,
            Err(code) => return code,
        };
        match raw::probe(&c, "MPI_Iprobe", source, tag, false) {
            Ok(st) => {
                // SAFETY: by contract.
                unsafe {
                    *flag = st.is_some() as c_int;
                    if let Some(st) = st {
                        write_status(status, &st);
                    }
                }
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        unsafe { wait_one(request, status) }
    }

    fn Waitall(count: c_int, requests: *mut MPI_Request, statuses: *mut MPI_Status) -> c_int {
        let mut first_err = MPI_SUCCESS;
        for i in 0..count.max(0) as usize {
            let st = if status_ignored(statuses) {
                statuses
            } else {
                // SAFETY: an array of `count` statuses by contract.
                unsafe { statuses.add(i) }
            };
            // SAFETY: an array of `count` requests by contract.
            let r = unsafe { wait_one(requests.add(i), st) };
            if r != MPI_SUCCESS && first_err == MPI_SUCCESS {
                first_err = r;
            }
        }
        first_err
    }

    fn Waitany(count: c_int, requests: *mut MPI_Request, indx: *mut c_int, status: *mut MPI_Status) -> c_int {
        let n = count.max(0) as usize;
        // SAFETY: an array of `count` requests by contract.
        let handles: Vec<MPI_Request> = (0..n).map(|i| unsafe { *requests.add(i) }).collect();
        let live: Vec<usize> = (0..n).filter(|&i| handles[i] != MPI_REQUEST_NULL).collect();
        if live.is_empty() {
            // SAFETY: by contract.
            unsafe {
                *indx = MPI_UNDEFINED;
                write_status(status, &mpcrs::Status::empty());
            }
            return MPI_SUCCESS;
        }
        // Take the live requests out of the table while waiting (no lock is held
        // across the wait), then put back those that did not complete.
        let mut taken: Vec<(usize, RequestEntry)> = Vec::new();
        {
            let mut st = rank_state().expect("inside a rank");
            for &i in &live {
                match st.take_request(handles[i]) {
                    Some(e) => taken.push((i, e)),
                    None => {
                        drop(st);
                        for (j, e) in taken {
                            // SAFETY: restoring the caller's array entries.
                            unsafe { *requests.add(j) = rank_state().expect("rank").add_request(e) };
                        }
                        return invalid_request("MPI_Waitany", handles[i]);
                    }
                }
            }
        }
        let refs: Vec<&raw::RawRequest> = taken.iter().map(|(_, e)| &e.request).collect();
        let first = raw::wait_some(&refs)[0];
        let mut result = MPI_SUCCESS;
        for (k, (i, e)) in taken.into_iter().enumerate() {
            if k == first {
                let st = e.request.wait();
                if let Some(s) = e.staging {
                    s.finish(st.bytes);
                }
                // SAFETY: by contract.
                unsafe {
                    *indx = i as c_int;
                    *requests.add(i) = MPI_REQUEST_NULL;
                    result = finish(&e.comm, e.call, &st, status);
                }
            } else {
                // SAFETY: by contract: the entry gets a (possibly new) live handle.
                unsafe { *requests.add(i) = rank_state().expect("rank").add_request(e) };
            }
        }
        result
    }

    fn Test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: by contract.
        let h = unsafe { *request };
        if h == MPI_REQUEST_NULL {
            // SAFETY: by contract.
            unsafe {
                *flag = 1;
                write_status(status, &mpcrs::Status::empty());
            }
            return MPI_SUCCESS;
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

    fn Request_free(request: *mut MPI_Request) -> c_int {
        // SAFETY: by contract.
        let h = unsafe { *request };
        let Some(e) = rank_state().and_then(|mut st| st.take_request(h)) else {
            return invalid_request("MPI_Request_free", h);
        };
        // The operation still completes; its buffer must not be reused before that,
        // so wait here rather than leave it to run unobserved.
        e.request.wait();
        // SAFETY: by contract.
        unsafe { *request = MPI_REQUEST_NULL };
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
                size if bytes % size as u64 == 0 => (bytes / size as u64) as c_int,
                _ => MPI_UNDEFINED,
            };
        }
        MPI_SUCCESS
    }
}
