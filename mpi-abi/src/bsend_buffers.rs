//! MPI-4.1's buffers of buffered sends beyond MPI_Buffer_attach: a
//! communicator's own (MPI_Comm_attach_buffer, used by its MPI_Bsend
//! instead of the process's), and flushing a buffer (MPI_Buffer_flush,
//! MPI_Comm_flush_buffer and their non-blocking forms): waiting until the
//! messages sent from it are delivered, the buffer staying attached.

use std::os::raw::{c_int, c_void};

use mpcrs::raw::{self, RawRequest};
use mpcrs::ErrorClass;

use crate::ctypes::MPI_Count;
use crate::export::{mpi_fn, tri};
use crate::handles::*;

/// Takes the buffered sends of `owner`'s buffer (`None`: the process's) out
/// of the pending list, each with the copy it sends from; `None` outside a rank.
fn take(owner: Option<MPI_Comm>) -> Option<Vec<(RawRequest, Vec<u8>)>> {
    let mut st = rank_state()?;
    let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut st.bsends)
        .into_iter()
        .partition(|(_, _, o)| *o == owner);
    st.bsends = others;
    Some(mine.into_iter().map(|(r, copy, _)| (r, copy)).collect())
}

/// Waits until every message sent from `owner`'s buffer is delivered
/// (`None` outside a rank).
pub(crate) fn flush(owner: Option<MPI_Comm>) -> Option<()> {
    for (r, _copy) in take(owner)? {
        r.wait();
    }
    Some(())
}

/// MPI_Buffer_attach(_c): the process's buffer (one at a time).
pub(crate) fn attach_process(buffer: *mut c_void, size: usize) -> c_int {
    let Some(mut st) = rank_state() else {
        return ErrorClass::Other as c_int;
    };
    if st.bsend_buffer.is_some() {
        return ErrorClass::Buffer as c_int;
    }
    st.bsend_buffer = Some((buffer as usize, size));
    MPI_SUCCESS
}

/// MPI_Buffer_detach(_c): the process's buffer once the messages sent from
/// it are delivered, as (address, size).
pub(crate) fn detach_process() -> Result<(usize, usize), c_int> {
    flush(None).ok_or(ErrorClass::Other as c_int)?;
    rank_state()
        .and_then(|mut st| st.bsend_buffer.take())
        .ok_or(ErrorClass::Buffer as c_int)
}

/// A request completing when `owner`'s buffered messages are delivered,
/// stored as the program's request on `comm`.
///
/// # Safety
/// `request` writable.
unsafe fn iflush(
    call: &'static str,
    owner: Option<MPI_Comm>,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let c = tri!(comm_for(call, comm));
    let Some(pending) = take(owner) else {
        return ErrorClass::Other as c_int;
    };
    let (done, completer) = raw::manual_request();
    raw::spawn_as_rank(move || {
        // Each copy is freed once its send is done.
        for (r, _copy) in pending {
            r.wait();
        }
        completer.complete(mpcrs::Status::empty());
    });
    crate::p2p::start(call, c, Ok(done), None, request)
}

/// Attaches `buffer` of `size` bytes to communicator `comm`.
fn attach(call: &'static str, comm: MPI_Comm, buffer: *mut c_void, size: usize) -> c_int {
    let c = tri!(comm_for(call, comm));
    let mut st = rank_state().expect("inside a rank");
    if st.comm_bsend_buffers.contains_key(&comm) {
        drop(st);
        return fail(
            &c,
            call,
            ErrorClass::Buffer,
            "the communicator has a buffer attached already".into(),
        );
    }
    st.comm_bsend_buffers.insert(comm, (buffer as usize, size));
    MPI_SUCCESS
}

/// Detaches `comm`'s buffer once its messages are delivered: (address, size).
fn detach(call: &'static str, comm: MPI_Comm) -> Result<(usize, usize), c_int> {
    let c = comm_for(call, comm)?;
    flush(Some(comm)).ok_or(ErrorClass::Other as c_int)?;
    let b = rank_state()
        .expect("inside a rank")
        .comm_bsend_buffers
        .remove(&comm);
    b.ok_or_else(|| {
        fail(
            &c,
            call,
            ErrorClass::Buffer,
            "the communicator has no buffer attached".into(),
        )
    })
}

/// Forgets the buffer of communicator handle `comm` (MPI_Comm_free: the
/// handle may name another communicator later).
pub(crate) fn forget(comm: MPI_Comm) {
    if let Some(mut st) = rank_state() {
        st.comm_bsend_buffers.remove(&comm);
    }
}

mpi_fn! {
    fn Buffer_flush() -> c_int {
        match flush(None) {
            Some(()) => MPI_SUCCESS,
            None => ErrorClass::Other as c_int,
        }
    }

    fn Buffer_iflush(request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { iflush("MPI_Buffer_iflush", None, MPI_COMM_SELF, request) }
    }

    fn Comm_attach_buffer(comm: MPI_Comm, buffer: *mut c_void, size: c_int) -> c_int {
        attach("MPI_Comm_attach_buffer", comm, buffer, size.max(0) as usize)
    }

    fn Comm_attach_buffer_c(comm: MPI_Comm, buffer: *mut c_void, size: MPI_Count) -> c_int {
        attach("MPI_Comm_attach_buffer_c", comm, buffer, size.max(0) as usize)
    }

    fn Comm_detach_buffer(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        let call = "MPI_Comm_detach_buffer";
        let (addr, len) = tri!(detach(call, comm));
        let Ok(n) = c_int::try_from(len) else {
            // Attached with MPI_Comm_attach_buffer_c: only its _c form can say the size.
            rank_state().expect("inside a rank").comm_bsend_buffers.insert(comm, (addr, len));
            let c = tri!(comm_for(call, comm));
            return fail(&c, call, ErrorClass::Count, format!("the buffer's {len} bytes do not fit in an int: use MPI_Comm_detach_buffer_c"));
        };
        // SAFETY: `buffer_addr` is a `void **` per MPI; `size` writable.
        unsafe {
            *(buffer_addr as *mut *mut c_void) = addr as *mut c_void;
            *size = n;
        }
        MPI_SUCCESS
    }

    fn Comm_detach_buffer_c(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
        let (addr, len) = tri!(detach("MPI_Comm_detach_buffer_c", comm));
        // SAFETY: `buffer_addr` is a `void **` per MPI; `size` writable.
        unsafe {
            *(buffer_addr as *mut *mut c_void) = addr as *mut c_void;
            *size = len as MPI_Count;
        }
        MPI_SUCCESS
    }

    fn Comm_flush_buffer(comm: MPI_Comm) -> c_int {
        tri!(comm_for("MPI_Comm_flush_buffer", comm));
        match flush(Some(comm)) {
            Some(()) => MPI_SUCCESS,
            None => ErrorClass::Other as c_int,
        }
    }

    fn Comm_iflush_buffer(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { iflush("MPI_Comm_iflush_buffer", Some(comm), comm, request) }
    }
}
