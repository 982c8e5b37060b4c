//! Point-to-point calls and requests.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use mpcrs::raw;
use mpcrs::{Communicator, ErrorClass};

use crate::datatype::{self, Staging, TypeInfo};
use crate::errhandler::{code_on, ret_on};
use crate::export::{mpi_fn, tri};
use crate::handles::*;

/// Resolves the communicator and the (packed) byte size of (count, datatype).
pub(crate) fn resolve(
    call: &'static str,
    comm: MPI_Comm,
    count: c_int,
    t: MPI_Datatype,
) -> Result<(CommRef, usize, TypeInfo), c_int> {
    let c = comm_for(call, comm)?;
    match datatype::describe(count, t) {
        Ok((len, ti)) => Ok((c, len, ti)),
        Err((class, detail)) => Err(fail(&c, call, class, detail)),
    }
}

/// The bytes of a (count, datatype) argument: the common case of a predefined
/// datatype needs no description and no staging.
pub(crate) enum Resolved {
    Contiguous(usize),
    Typed(usize, TypeInfo),
}

/// [`resolve`] with the predefined-datatype fast path (the hot calls).
pub(crate) fn resolve_fast(
    call: &'static str,
    comm: MPI_Comm,
    count: c_int,
    t: MPI_Datatype,
) -> Result<(CommRef, Resolved), c_int> {
    if let Some(el) = datatype::predefined_contiguous(t) {
        if count >= 0 {
            return Ok((
                comm_for(call, comm)?,
                Resolved::Contiguous(count as usize * el.size),
            ));
        }
    }
    let (c, len, ti) = resolve(call, comm, count, t)?;
    Ok((c, Resolved::Typed(len, ti)))
}

/// [`resolve_fast`] for a point-to-point buffer: NULL with elements of a
/// predefined datatype is MPI_ERR_BUFFER, named (with a derived datatype
/// NULL is MPI_BOTTOM, which absolute displacements make valid).
pub(crate) fn resolve_buffer(
    call: &'static str,
    comm: MPI_Comm,
    buf: *const c_void,
    count: c_int,
    t: MPI_Datatype,
) -> Result<(CommRef, Resolved), c_int> {
    let (c, r) = resolve_fast(call, comm, count, t)?;
    if let (Resolved::Contiguous(len @ 1..), true) = (&r, buf.is_null()) {
        return Err(fail(
            &c,
            call,
            ErrorClass::Buffer,
            format!("the buffer is NULL for {count} elements ({len} bytes)"),
        ));
    }
    Ok((c, r))
}

/// Bytes to send: the buffer itself, or a packed copy kept in the staging.
///
/// # Safety
/// `buf` holds `count` elements of the datatype.
pub(crate) unsafe fn send_bytes(
    buf: *const c_void,
    count: c_int,
    r: &Resolved,
) -> (*const u8, usize, Option<Staging>) {
    match r {
        Resolved::Contiguous(len) => (buf.cast(), *len, None),
        Resolved::Typed(len, ti) => {
            // SAFETY: forwarded.
            let (p, st) = unsafe { Staging::send(buf.cast(), count as usize, ti) };
            (p, *len, st)
        }
    }
}

/// Where to receive: the buffer itself, or a staging area unpacked afterwards.
///
/// # Safety
/// `buf` holds `count` elements of the datatype.
pub(crate) unsafe fn recv_bytes(
    buf: *mut c_void,
    count: c_int,
    r: &Resolved,
) -> (*mut u8, usize, Option<Staging>) {
    match r {
        Resolved::Contiguous(len) => (buf.cast(), *len, None),
        Resolved::Typed(len, ti) => {
            // SAFETY: forwarded.
            let (p, st) = unsafe { Staging::recv(buf.cast(), count as usize, ti, false) };
            (p, *len, st)
        }
    }
}

/// Finishes a completed operation: status out, truncation through the handler.
///
/// # Safety
/// `status` is MPI_STATUS_IGNORE or writable.
pub(crate) unsafe fn finish(
    comm: &Communicator,
    call: &'static str,
    st: &mpcrs::Status,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { write_status(status, st) };
    ret_on(comm, raw::status_error(comm, call, st))
}

pub(crate) fn start(
    call: &'static str,
    comm: impl Into<Arc<Communicator>>,
    r: mpcrs::Result<raw::RawRequest>,
    staging: Option<Staging>,
    request: *mut MPI_Request,
) -> c_int {
    let comm: Arc<Communicator> = comm.into();
    match r {
        Ok(req) => {
            let h = rank_state()
                .expect("inside a rank")
                .add_request(RequestEntry {
                    request: req,
                    comm,
                    call,
                    staging,
                    persistent: None,
                    active: true,
                    grequest: None,
                });
            // SAFETY: writable by the callers' contract.
            unsafe { *request = h };
            MPI_SUCCESS
        }
        Err(e) => code_on(&comm, &e),
    }
}

/// MPI_Isend, MPI_Issend and MPI_Irsend.
///
/// # Safety
/// `buf` holds `count` elements and stays untouched until the request completes;
/// `request` is writable.
#[allow(clippy::too_many_arguments)]
unsafe fn isend_common(
    call: &'static str,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    sync: bool,
    request: *mut MPI_Request,
) -> c_int {
    let (c, r) = tri!(resolve_buffer(call, comm, buf, count, datatype));
    // SAFETY: forwarded; a packed copy moves into the request entry.
    let (data, len, staged) = unsafe { send_bytes(buf, count, &r) };
    // SAFETY: as above.
    let r = unsafe { raw::isend(&c, call, data, len, dest, tag, sync) };
    start(call, c, r, staged, request)
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn send_impl(
    call: &'static str,
    buf: *const c_void,
    count: c_int,
    t: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    sync: bool,
) -> c_int {
    let (c, r) = tri!(resolve_buffer(call, comm, buf, count, t));
    // SAFETY: the C caller keeps `buf` valid for count elements during the call.
    let (data, len, _staged) = unsafe { send_bytes(buf, count, &r) };
    // SAFETY: `data` is the buffer or its packed copy, alive until we return.
    match unsafe { raw::isend(&c, call, data, len, dest, tag, sync) } {
        Ok(r) => {
            r.wait();
            MPI_SUCCESS
        }
        Err(e) => code_on(&c, &e),
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
        let (c, r) = tri!(resolve_buffer("MPI_Recv", comm, buf, count, datatype));
        // SAFETY: the C caller lends `buf` for count elements during the call.
        let (dst, len, staged) = unsafe { recv_bytes(buf, count, &r) };
        // SAFETY: `dst` is the buffer or a staging area of `len` bytes.
        match unsafe { raw::recv(&c, "MPI_Recv", dst, len, source, tag) } {
            Ok(st) => {
                if let Some(s) = staged {
                    s.finish(st.bytes);
                }
                // SAFETY: `status` by contract.
                unsafe { finish(&c, "MPI_Recv", &st, status) }
            }
            Err(e) => code_on(&c, &e),
        }
    }

    fn Isend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { isend_common("MPI_Isend", buf, count, datatype, dest, tag, comm, false, request) }
    }

    fn Issend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { isend_common("MPI_Issend", buf, count, datatype, dest, tag, comm, true, request) }
    }

    fn Irecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (c, r) = tri!(resolve_buffer("MPI_Irecv", comm, buf, count, datatype));
        // SAFETY: MPI forbids touching `buf` until the request completes.
        let (dst, len, staged) = unsafe { recv_bytes(buf, count, &r) };
        // SAFETY: `dst` stays valid: the staging moves into the request entry.
        let r = unsafe { raw::irecv(&c, "MPI_Irecv", dst, len, source, tag) };
        start("MPI_Irecv", c, r, staged, request)
    }

    fn Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let (c, slen, sti) = tri!(resolve("MPI_Sendrecv", comm, sendcount, sendtype));
        let (_, rlen, rti) = tri!(resolve("MPI_Sendrecv", comm, recvcount, recvtype));
        // SAFETY: both buffers lent for the call.
        let (sdata, _sstaged) = unsafe { Staging::send(sendbuf.cast(), sendcount as usize, &sti) };
        // SAFETY: as above.
        let (rdata, rstaged) = unsafe { Staging::recv(recvbuf.cast(), recvcount as usize, &rti, false) };
        // SAFETY: both areas live until we return.
        let r = unsafe { raw::irecv(&c, "MPI_Sendrecv", rdata, rlen, source, recvtag) };
        let r = match r {
            Ok(r) => r,
            Err(e) => return code_on(&c, &e),
        };
        // SAFETY: as above.
        match unsafe { raw::isend(&c, "MPI_Sendrecv", sdata, slen, dest, sendtag, false) } {
            Ok(s) => {
                s.wait();
            }
            Err(e) => {
                r.wait();
                return code_on(&c, &e);
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
        let c = tri!(comm_for("MPI_Probe", comm));
        match raw::probe(&c, "MPI_Probe", source, tag, true) {
            Ok(st) => {
                // SAFETY: by contract.
                unsafe { write_status(status, &st.expect("blocking probe")) };
                MPI_SUCCESS
            }
            Err(e) => code_on(&c, &e),
        }
    }

    fn Iprobe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        let c = tri!(comm_for("MPI_Iprobe", comm));
        match raw::probe(&c, "MPI_Iprobe", source, tag, false) {
            Ok(st) => {
                // SAFETY: by contract.
                unsafe {
                    *flag = st.is_some() as c_int;
                    if let Some(st) = st {
                        write_status(status, &st);
                    }
                }
                if st.is_none() {
                    // An Iprobe loop is a wait: let the worker's other ranks run.
                    mpcrs::yield_now();
                }
                MPI_SUCCESS
            }
            Err(e) => code_on(&c, &e),
        }
    }
}

/// Sends a packed copy of (buf, count, datatype) from the MPI_Bsend buffer space;
/// returns once the copy is made.
///
/// # Safety
/// `buf` holds `count` elements.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn buffered_send(
    call: &'static str,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let (c, len, ti) = resolve(call, comm, count, datatype)?;
    let mut copy = Vec::with_capacity(len);
    // SAFETY: by contract.
    unsafe { datatype::pack(buf.cast(), count as usize, &ti, &mut copy) };
    let owner = {
        let mut st = rank_state().expect("inside a rank");
        st.bsends.retain(|(r, _, _)| r.test().is_none());
        // The communicator's own buffer if it has one (MPI-4.1), else the process's.
        let (owner, room, which) = match st.comm_bsend_buffers.get(&comm) {
            Some(&(_, size)) => (Some(comm), size, "MPI_Comm_attach_buffer"),
            None => (
                None,
                st.bsend_buffer.map_or(0, |(_, size)| size),
                "MPI_Buffer_attach",
            ),
        };
        let used: usize = st
            .bsends
            .iter()
            .filter(|(_, _, o)| *o == owner)
            .map(|(_, d, _)| d.len() + MPI_BSEND_OVERHEAD)
            .sum();
        if used + len + MPI_BSEND_OVERHEAD > room {
            drop(st);
            return Err(fail(
                &c,
                call,
                mpcrs::ErrorClass::Buffer,
                format!(
                "{} bytes do not fit in the attached buffer ({room} bytes, {used} in use; {which})",
                len + MPI_BSEND_OVERHEAD
            ),
            ));
        }
        owner
    };
    // SAFETY: `copy` moves into the pending list below and outlives the send.
    let r = unsafe { raw::isend(&c, call, copy.as_ptr(), len, dest, tag, false) }
        .map_err(|e| code_on(&c, &e))?;
    rank_state()
        .expect("inside a rank")
        .bsends
        .push((r, copy, owner));
    Ok(())
}

mpi_fn! {
    fn Rsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // Ready mode: the matching receive is posted; a standard send is correct.
        // SAFETY: forwarded from the C caller.
        unsafe { send_impl("MPI_Rsend", buf, count, datatype, dest, tag, comm, false) }
    }

    fn Irsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // Ready mode: the matching receive is posted; a standard send is correct.
        // SAFETY: forwarded from the C caller.
        unsafe { isend_common("MPI_Irsend", buf, count, datatype, dest, tag, comm, false, request) }
    }

    fn Bsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        match unsafe { buffered_send("MPI_Bsend", buf, count, datatype, dest, tag, comm) } {
            Ok(()) => MPI_SUCCESS,
            Err(code) => code,
        }
    }

    fn Ibsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        match unsafe { buffered_send("MPI_Ibsend", buf, count, datatype, dest, tag, comm) } {
            Ok(()) => {
                // The data is copied: the request is complete at once.
                let c = comm_for("MPI_Ibsend", comm).expect("resolved above");
                start("MPI_Ibsend", c, Ok(raw::RawRequest::completed(mpcrs::Status::empty())), None, request)
            }
            Err(code) => code,
        }
    }

    fn Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
        crate::bsend_buffers::attach_process(buffer, size.max(0) as usize)
    }

    fn Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        let call = "MPI_Buffer_detach";
        let (addr, len) = tri!(crate::bsend_buffers::detach_process());
        let Ok(n) = c_int::try_from(len) else {
            // Attached by MPI_Buffer_attach_c: only MPI_Buffer_detach_c can say its size.
            crate::bsend_buffers::attach_process(addr as *mut c_void, len);
            let w = tri!(comm_for(call, MPI_COMM_WORLD));
            return fail(&w, call, mpcrs::ErrorClass::Count, format!("the buffer's {len} bytes do not fit in an int: use MPI_Buffer_detach_c"));
        };
        // SAFETY: `buffer_addr` is a `void **` per MPI; `size` writable.
        unsafe {
            *(buffer_addr as *mut *mut c_void) = addr as *mut c_void;
            *size = n;
        }
        MPI_SUCCESS
    }

    fn Sendrecv_replace(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let (c, len, ti) = tri!(resolve("MPI_Sendrecv_replace", comm, count, datatype));
        // Send from a packed copy, receive into the buffer.
        let mut copy = Vec::with_capacity(len);
        // SAFETY: `buf` holds `count` elements.
        unsafe { datatype::pack(buf.cast(), count as usize, &ti, &mut copy) };
        // SAFETY: as above.
        let (dst, staged) = unsafe { Staging::recv(buf.cast(), count as usize, &ti, false) };
        // SAFETY: `dst` holds `len` bytes until we return.
        let r = match unsafe { raw::irecv(&c, "MPI_Sendrecv_replace", dst, len, source, recvtag) } {
            Ok(r) => r,
            Err(e) => return code_on(&c, &e),
        };
        // SAFETY: `copy` lives until we return.
        match unsafe { raw::isend(&c, "MPI_Sendrecv_replace", copy.as_ptr(), len, dest, sendtag, false) } {
            Ok(s) => {
                s.wait();
            }
            Err(e) => {
                r.wait();
                return code_on(&c, &e);
            }
        }
        let st = r.wait();
        if let Some(s) = staged {
            s.finish(st.bytes);
        }
        // SAFETY: by contract.
        unsafe { finish(&c, "MPI_Sendrecv_replace", &st, status) }
    }

    fn Mprobe(source: c_int, tag: c_int, comm: MPI_Comm, message: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        unsafe { matched_probe("MPI_Mprobe", source, tag, comm, std::ptr::null_mut(), message, status) }
    }

    fn Improbe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        unsafe { matched_probe("MPI_Improbe", source, tag, comm, flag, message, status) }
    }

    fn Mrecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: forwarded.
        unsafe { matched_recv("MPI_Mrecv", buf, count, datatype, message, status) }
    }

    fn Imrecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut c_int, request: *mut MPI_Request) -> c_int {
        // The message is already here: receive it now, hand back a completed request
        // that reports its status.
        let mut st = MPI_Status::default();
        // SAFETY: forwarded.
        let r = unsafe { matched_recv("MPI_Imrecv", buf, count, datatype, message, &mut st) };
        if r != MPI_SUCCESS {
            return r;
        }
        let c = tri!(comm_for("MPI_Imrecv", MPI_COMM_WORLD));
        let status = mpcrs::Status {
            source: st.MPI_SOURCE,
            tag: st.MPI_TAG,
            bytes: status_bytes(&st) as usize,
            error: mpcrs::ErrorClass::Success,
            cancelled: false,
        };
        start("MPI_Imrecv", c, Ok(raw::RawRequest::completed(status)), None, request)
    }
}

/// MPI_Mprobe (`flag` null: blocking) and MPI_Improbe.
///
/// # Safety
/// Pointers writable as MPI specifies.
unsafe fn matched_probe(
    call: &'static str,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    let c = tri!(comm_for(call, comm));
    let blocking = flag.is_null();
    match raw::mprobe(&c, call, source, tag, blocking) {
        Err(e) => code_on(&c, &e),
        Ok(found) => {
            let handle = match found {
                Some(m) => {
                    // SAFETY: by contract.
                    unsafe { write_status(status, &m.status()) };
                    rank_state().expect("inside a rank").add_message(m)
                }
                None if source == mpcrs::PROC_NULL => {
                    // SAFETY: by contract.
                    unsafe { write_status(status, &mpcrs::Status::empty()) };
                    MPI_MESSAGE_NO_PROC
                }
                None => MPI_MESSAGE_NULL,
            };
            // SAFETY: by contract.
            unsafe {
                if !blocking {
                    *flag = (handle != MPI_MESSAGE_NULL) as c_int;
                }
                *message = handle;
            }
            if handle == MPI_MESSAGE_NULL {
                // An Improbe loop is a wait: let the worker's other ranks run.
                mpcrs::yield_now();
            }
            MPI_SUCCESS
        }
    }
}

/// MPI_Mrecv of a message taken by a matched probe.
///
/// # Safety
/// `buf` holds `count` elements; `message` readable and writable.
unsafe fn matched_recv(
    call: &'static str,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: by contract.
    let h = unsafe { *message };
    let (c, len, ti) = tri!(resolve(call, MPI_COMM_WORLD, count, datatype));
    if h == MPI_MESSAGE_NO_PROC {
        // SAFETY: by contract.
        unsafe {
            write_status(status, &mpcrs::Status::empty());
            *message = MPI_MESSAGE_NULL;
        }
        return MPI_SUCCESS;
    }
    let Some(m) = rank_state().and_then(|mut st| st.take_message(h)) else {
        return fail(
            &c,
            call,
            mpcrs::ErrorClass::Request,
            format!("invalid message handle {h:#x}"),
        );
    };
    // SAFETY: by contract.
    let (dst, staged) = unsafe { Staging::recv(buf.cast(), count as usize, &ti, false) };
    // SAFETY: `dst` holds `len` bytes.
    let st = unsafe { m.receive(dst, len) };
    if let Some(s) = staged {
        s.finish(st.bytes);
    }
    // SAFETY: by contract.
    unsafe { *message = MPI_MESSAGE_NULL };
    // SAFETY: by contract.
    unsafe { finish(&c, call, &st, status) }
}
