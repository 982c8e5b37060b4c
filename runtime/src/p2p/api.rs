//! Typed point-to-point calls of the Rust API.

use std::marker::PhantomData;

use super::SendMode;
use crate::comm::Communicator;
use crate::consts::PROC_NULL;
use crate::datatype::{bytes_of, bytes_of_mut, Equivalence};
use crate::error::{ErrorClass, Result};
use crate::request::{Pending, Status};
use crate::scope::{Request, Scope};

impl Communicator {
    fn status_result(&self, call: &'static str, st: Status) -> Result<Status> {
        if st.error == ErrorClass::Success {
            Ok(st)
        } else {
            self.fail(
                call,
                st.error,
                format!(
                    "message of {} bytes from rank {} (tag {}) did not fit the receive buffer",
                    st.bytes, st.source, st.tag
                ),
            )
        }
    }

    /// Starts a send; the caller keeps `buf` alive until the result is finished.
    fn start_send(
        &self,
        call: &'static str,
        buf: &[u8],
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Pending> {
        // SAFETY: callers keep `buf` borrowed until the operation finishes (blocking
        // calls wait before returning; non-blocking ones borrow it for their scope).
        unsafe { self.send_bytes(call, buf.as_ptr(), buf.len(), dest, tag, mode) }
    }

    /// Starts a receive; the caller keeps `buf` exclusively borrowed until finished.
    fn start_recv(
        &self,
        call: &'static str,
        buf: &mut [u8],
        source: i32,
        tag: i32,
    ) -> Result<Pending> {
        // SAFETY: as in `start_send`, for exclusive access to `buf`.
        unsafe { self.recv_bytes(call, buf.as_mut_ptr(), buf.len(), source, tag) }
    }

    /// Starts a send of `len` bytes at `buf` after checking `dest` and `tag`
    /// (MPI_PROC_NULL completes at once).
    ///
    /// # Safety
    /// `buf` stays valid and unmodified for `len` bytes until the operation finishes.
    pub(crate) unsafe fn send_bytes(
        &self,
        call: &'static str,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Pending> {
        if self.check_peer(call, dest, tag, false)? {
            return Ok(Pending::Done(Status::empty()));
        }
        let msg = super::Outgoing {
            source: self.rank,
            tag,
            buf,
            len,
            mode,
        };
        let to = self.member_of_peer(dest as usize);
        // SAFETY: forwarded from this function's contract.
        let pending = unsafe { super::send_to(&self.shared, to, msg) };
        Ok(self.described(pending, true, dest, tag))
    }

    /// `pending`, which says what it is if it has to wait (a send or a
    /// receive, its peer and tag on this communicator), for a deadlock report.
    fn described(&self, pending: Pending, sending: bool, peer: i32, tag: i32) -> Pending {
        if let Pending::Waiting(c) = &pending {
            c.describe(crate::waits::Operation {
                sending,
                context: self.context_id(),
                peer,
                tag,
            });
        }
        pending
    }

    /// Starts a receive into `capacity` bytes at `buf` after checking `source`
    /// and `tag` (MPI_PROC_NULL completes at once).
    ///
    /// # Safety
    /// `buf` stays valid for `capacity` bytes, accessed by nobody else, until the
    /// operation finishes.
    pub(crate) unsafe fn recv_bytes(
        &self,
        call: &'static str,
        buf: *mut u8,
        capacity: usize,
        source: i32,
        tag: i32,
    ) -> Result<Pending> {
        if self.check_peer(call, source, tag, true)? {
            return Ok(Pending::Done(Status::empty()));
        }
        // SAFETY: forwarded from this function's contract.
        let pending = unsafe { super::recv(self.my_mailbox(), source, tag, buf, capacity) };
        Ok(self.described(pending, false, source, tag))
    }

    /// MPI_Send: returns once `buf` may be reused.
    pub fn send<T: Equivalence>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.start_send("MPI_Send", bytes_of(buf), dest, tag, SendMode::Standard)?
            .wait();
        Ok(())
    }

    /// MPI_Ssend: returns once the matching receive has started.
    pub fn ssend<T: Equivalence>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.start_send("MPI_Ssend", bytes_of(buf), dest, tag, SendMode::Synchronous)?
            .wait();
        Ok(())
    }

    /// MPI_Recv into `buf`; the status says how many elements arrived.
    pub fn recv<T: Equivalence>(&self, buf: &mut [T], source: i32, tag: i32) -> Result<Status> {
        if self.check_peer("MPI_Recv", source, tag, true)? {
            return Ok(Status::empty());
        }
        let b = bytes_of_mut(buf);
        // SAFETY: `b` is exclusively borrowed until the receive completes here.
        let st = unsafe {
            super::recv_blocking(
                self.my_mailbox(),
                self.context_id(),
                source,
                tag,
                b.as_mut_ptr(),
                b.len(),
            )
        };
        self.status_result("MPI_Recv", st)
    }

    /// Receives a message of any length: probes, then receives into a new vector.
    pub fn recv_vec<T: Equivalence>(&self, source: i32, tag: i32) -> Result<(Vec<T>, Status)> {
        if source == PROC_NULL {
            return Ok((Vec::new(), Status::empty()));
        }
        let st = self.probe(source, tag)?;
        let n = st.bytes.div_ceil(std::mem::size_of::<T>());
        let mut v: Vec<T> = Vec::with_capacity(n);
        // SAFETY: `T: Equivalence` accepts any bits, so zeroed memory is a valid T.
        unsafe {
            std::ptr::write_bytes(v.as_mut_ptr(), 0, n);
            v.set_len(n);
        }
        // Receive exactly the probed message: same source and tag, and nobody else
        // receives on this rank's mailbox meanwhile (only this ULT does).
        let st = self.recv(&mut v, st.source, st.tag)?;
        v.truncate(st.count::<T>());
        Ok((v, st))
    }

    /// MPI_Sendrecv.
    pub fn sendrecv<T: Equivalence, U: Equivalence>(
        &self,
        send: &[T],
        dest: i32,
        send_tag: i32,
        recv: &mut [U],
        source: i32,
        recv_tag: i32,
    ) -> Result<Status> {
        let r = self.start_recv("MPI_Sendrecv", bytes_of_mut(recv), source, recv_tag)?;
        let s = self.start_send(
            "MPI_Sendrecv",
            bytes_of(send),
            dest,
            send_tag,
            SendMode::Standard,
        )?;
        s.wait();
        let st = r.wait();
        self.status_result("MPI_Sendrecv", st)
    }

    /// MPI_Sendrecv_replace: sends `buf`, then receives into it.
    pub fn sendrecv_replace<T: Equivalence>(
        &self,
        buf: &mut [T],
        dest: i32,
        send_tag: i32,
        source: i32,
        recv_tag: i32,
    ) -> Result<Status> {
        let copy = buf.to_vec();
        self.sendrecv(&copy, dest, send_tag, buf, source, recv_tag)
    }

    /// MPI_Iprobe.
    pub fn iprobe(&self, source: i32, tag: i32) -> Result<Option<Status>> {
        if self.check_peer("MPI_Iprobe", source, tag, true)? {
            return Ok(Some(Status::empty()));
        }
        Ok(super::iprobe(self.my_mailbox(), source, tag))
    }

    /// MPI_Probe: waits for a matching message without receiving it.
    pub fn probe(&self, source: i32, tag: i32) -> Result<Status> {
        if self.check_peer("MPI_Probe", source, tag, true)? {
            return Ok(Status::empty());
        }
        Ok(super::probe(
            self.my_mailbox(),
            self.context_id(),
            source,
            tag,
        ))
    }

    fn request<'s>(&self, scope: &Scope<'s, '_>, call: &'static str, p: Pending) -> Request<'s> {
        scope.track(&p);
        Request {
            pending: p,
            call,
            world_rank: self.world_rank,
            errhandler: self.error_handler(),
            _buf: PhantomData,
        }
    }

    /// MPI_Isend: `buf` stays borrowed until the scope ends.
    pub fn isend<'s, T: Equivalence>(
        &self,
        scope: &Scope<'s, '_>,
        buf: &'s [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        let p = self.start_send("MPI_Isend", bytes_of(buf), dest, tag, SendMode::Standard)?;
        Ok(self.request(scope, "MPI_Isend", p))
    }

    /// MPI_Issend.
    pub fn issend<'s, T: Equivalence>(
        &self,
        scope: &Scope<'s, '_>,
        buf: &'s [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        let p = self.start_send(
            "MPI_Issend",
            bytes_of(buf),
            dest,
            tag,
            SendMode::Synchronous,
        )?;
        Ok(self.request(scope, "MPI_Issend", p))
    }

    /// MPI_Irecv: `buf` stays exclusively borrowed until the scope ends.
    pub fn irecv<'s, T: Equivalence>(
        &self,
        scope: &Scope<'s, '_>,
        buf: &'s mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        let p = self.start_recv("MPI_Irecv", bytes_of_mut(buf), source, tag)?;
        Ok(self.request(scope, "MPI_Irecv", p))
    }
}
