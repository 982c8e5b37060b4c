//! MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4): the receive and the send
//! are posted at the call, so they keep their order among the rank's other
//! messages; one request completes when both have, with the receive's status.
//! A helper ULT of the rank waits for the two and completes it.

use std::os::raw::{c_int, c_void};

use mpcrs::raw::{self, RawRequest};
use mpcrs::Communicator;

use crate::datatype::{self, Staging};
use crate::errhandler::code_on;
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::p2p::{recv_bytes, resolve, resolve_buffer, send_bytes, start};

/// What the send reads until it completes: the program's buffer, a packed
/// copy of it, or the staging of a non-contiguous one. Held, not read: the
/// send reads through its pointer.
#[allow(dead_code)]
enum Source {
    Lent,
    Copy(Vec<u8>),
    Staged(Staging),
}

/// Posts the receive into `(dst, capacity)` and the send of `(src, len)` on
/// `c`, and returns the request that completes with both.
///
/// # Safety
/// `dst` valid for `capacity` bytes and `src` for `len` until the request
/// completes (`src` inside `keep` when that is a copy or staging).
#[allow(clippy::too_many_arguments)]
unsafe fn post(
    call: &'static str,
    c: &Communicator,
    (src, len, keep): (*const u8, usize, Source),
    dest: c_int,
    sendtag: c_int,
    (dst, capacity): (*mut u8, usize),
    source: c_int,
    recvtag: c_int,
) -> Result<RawRequest, c_int> {
    // SAFETY: by contract.
    let r = unsafe { raw::irecv(c, call, dst, capacity, source, recvtag) }
        .map_err(|e| code_on(c, &e))?;
    // SAFETY: by contract.
    let s = match unsafe { raw::isend(c, call, src, len, dest, sendtag, false) } {
        Ok(s) => s,
        Err(e) => {
            // The receive must not outlive the call's staging: withdraw it,
            // or let it finish if it matched already.
            if !r.cancel(c) {
                r.wait();
            }
            return Err(code_on(c, &e));
        }
    };
    let (req, completer) = raw::manual_request();
    raw::spawn_as_rank(move || {
        s.wait();
        drop(keep);
        completer.complete(r.wait());
    });
    Ok(req)
}

mpi_fn! {
    fn Isendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                 recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                 comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Isendrecv";
        let (c, sr) = tri!(resolve_buffer(CALL, comm, sendbuf, sendcount, sendtype));
        let (_, rr) = tri!(resolve_buffer(CALL, comm, recvbuf, recvcount, recvtype));
        // SAFETY: the buffers hold their counts of elements, lent until completion.
        let (src, slen, sstage) = unsafe { send_bytes(sendbuf, sendcount, &sr) };
        // SAFETY: as above.
        let (dst, rlen, rstage) = unsafe { recv_bytes(recvbuf, recvcount, &rr) };
        let keep = sstage.map_or(Source::Lent, Source::Staged);
        // SAFETY: the send's bytes are the program's buffer or in `keep`.
        let r = unsafe { post(CALL, &c, (src, slen, keep), dest, sendtag, (dst, rlen), source, recvtag) };
        match r {
            Ok(req) => start(CALL, c, Ok(req), rstage, request),
            Err(code) => code,
        }
    }

    fn Isendrecv_replace(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int,
                         source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        const CALL: &str = "MPI_Isendrecv_replace";
        let (c, len, ti) = tri!(resolve(CALL, comm, count, datatype));
        // Send from a packed copy, receive into the buffer.
        let mut copy = Vec::with_capacity(len);
        // SAFETY: `buf` holds `count` elements.
        unsafe { datatype::pack(buf.cast(), count.max(0) as usize, &ti, &mut copy) };
        // SAFETY: as above; lent until completion.
        let (dst, staged) = unsafe { Staging::recv(buf.cast(), count.max(0) as usize, &ti, false) };
        let src = copy.as_ptr();
        // SAFETY: `src` points into the copy `post` keeps until the send completed
        // (moving the Vec does not move its heap data).
        let r = unsafe { post(CALL, &c, (src, len, Source::Copy(copy)), dest, sendtag, (dst, len), source, recvtag) };
        match r {
            Ok(req) => start(CALL, c, Ok(req), staged, request),
            Err(code) => code,
        }
    }
}
