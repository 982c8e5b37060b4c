//! Frames arriving from other processes: put back in the order they were sent
//! (frames of one process may travel on different rails), matched against the
//! destination rank's posted receives or queued as unexpected, and the
//! rendezvous of large and synchronous messages (RTS, then a single
//! cross-memory copy on the same node or CTS and data frames elsewhere, then FIN).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::wire::{Header, Kind};
use super::{Deferred, Fabric};
use crate::request::{Completion, Status};

/// The receiving side of a communicator spanning processes, as the fabric sees
/// it: where the messages for its ranks go. The MPI layer implements it
/// (p2p/from_processes.rs); the fabric finds it by context in the [`Registry`].
pub(crate) trait Endpoint: std::any::Any + Send + Sync {
    /// Matches a message from another process against the destination rank's
    /// posted receives, or queues it as unexpected.
    fn arrive(&self, msg: Arrival<'_>);
    /// Takes the unmatched message `id` from process `from` out of rank
    /// `dest`'s unexpected queue; false if it is not there.
    fn withdraw(&self, dest: u32, from: u32, id: u64) -> bool;
}

/// A rank blocked in a receive that is told of its end directly (the inline
/// receive of its mailbox), not through a request.
pub(crate) trait InlineReceiver {
    fn finish_inline(&self, status: Status);
}

/// A frame as a rail hands it over: a vector of its own (the frame starting at
/// the offset), or lent where it lies in a shared-memory ring until the
/// delivery returns (copied only if it must wait: out of its turn, or as an
/// unexpected message).
pub(crate) enum FrameBuf<'a> {
    Owned(Vec<u8>, usize),
    Lent(&'a [u8]),
}

impl FrameBuf<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            FrameBuf::Owned(v, at) => v.get(*at..).unwrap_or(&[]),
            FrameBuf::Lent(b) => b,
        }
    }

    /// The frame kept: a vector and the offset it starts at.
    fn keep(self) -> (Vec<u8>, usize) {
        match self {
            FrameBuf::Owned(v, at) => (v, at),
            FrameBuf::Lent(b) => (b.to_vec(), 0),
        }
    }
}

/// Frames of one sending process that came before their turn, with their
/// headers and payload offsets; and the communicator its last message was for.
#[derive(Default)]
pub(crate) struct Reorder {
    expected: u64,
    early: BTreeMap<u64, (Header, Vec<u8>, usize)>,
    last: Option<LastComm>,
}

/// The communicator a sending process's last message was for, kept while the
/// registry is unchanged ([`Registry::version`]): the next message is most
/// often for it too, and is then delivered without the registry's lock.
struct LastComm {
    context: u64,
    version: u64,
    comm: Arc<dyn Endpoint>,
}

impl Reorder {
    /// Frames of the sender acted upon or held here for their turn.
    pub(crate) fn taken(&self) -> u64 {
        self.expected + self.early.len() as u64
    }
}

/// A message from another process nobody has received yet: an eager frame, or
/// the notice of a rendezvous whose data is still in the sender's memory.
pub(crate) struct Incoming {
    from: u32,
    header: Header,
    frame: Vec<u8>,
    /// Offset of the payload in `frame`.
    at: usize,
    /// The run of the job it arrived in ([`Fabric::generation`]).
    generation: u64,
}

impl Incoming {
    pub(crate) fn len(&self) -> usize {
        self.header.len as usize
    }

    /// Whether it is message `id` from process `from`.
    pub(crate) fn is(&self, from: u32, id: u64) -> bool {
        self.from == from && self.header.id == id
    }

    fn payload(&self) -> &[u8] {
        self.frame.get(self.at..).unwrap_or(&[])
    }
}

/// An eager frame or RTS in its turn, not matched yet; its payload starts `at`
/// bytes into the frame.
pub(crate) struct Arrival<'a> {
    from: u32,
    header: Header,
    frame: FrameBuf<'a>,
    at: usize,
    /// The run of the job it arrived in ([`Fabric::generation`]).
    generation: u64,
}

impl Arrival<'_> {
    fn payload(&self) -> &[u8] {
        self.frame.bytes().get(self.at..).unwrap_or(&[])
    }

    /// The rank of the communicator it is for, its sender's rank and its tag.
    pub(crate) fn dest(&self) -> u32 {
        self.header.dest
    }
    pub(crate) fn source(&self) -> i32 {
        self.header.source
    }
    pub(crate) fn tag(&self) -> i32 {
        self.header.tag
    }

    /// Its data came with it (an eager frame), rather than staying in the
    /// sender's memory (a rendezvous notice).
    pub(crate) fn is_eager(&self) -> bool {
        self.header.kind == Kind::Eager
    }

    /// The message kept for later (unexpected, or waiting for its communicator).
    pub(crate) fn keep(self) -> Incoming {
        let (frame, start) = self.frame.keep();
        Incoming {
            from: self.from,
            header: self.header,
            frame,
            at: start + self.at,
            generation: self.generation,
        }
    }
}

impl Incoming {
    /// A message kept for its communicator, arriving now that it exists.
    fn into_arrival(self) -> Arrival<'static> {
        Arrival {
            from: self.from,
            header: self.header,
            frame: FrameBuf::Owned(self.frame, 0),
            at: self.at,
            generation: self.generation,
        }
    }
}

/// A send waiting for its receiver (rendezvous, or a synchronous eager send),
/// with where it went: process `to`, rank `dest` of communicator `context`
/// (what a cancel names).
pub(crate) struct PendingSend {
    pub(crate) buf: *const u8,
    pub(crate) len: usize,
    pub(crate) done: Arc<Completion>,
    pub(crate) to: u32,
    pub(crate) context: u64,
    pub(crate) dest: u32,
}

/// Where the end of a receive is reported.
pub(crate) enum Finish {
    /// The completion of a request (non-blocking receives, blocking ones that
    /// queued behind others).
    Request(Arc<Completion>),
    /// The inline receive of a rank blocked in its mailbox.
    Inline(*const dyn InlineReceiver),
}

// SAFETY: an inline receive's mailbox outlives the receive: its rank waits in
// the mailbox until the status is published, holding the communicator.
unsafe impl Send for Finish {}

impl Finish {
    fn complete(self, status: Status) {
        match self {
            Finish::Request(done) => done.complete(status),
            // SAFETY: see `Send`: the mailbox is alive until this publication.
            Finish::Inline(receiver) => unsafe { &*receiver }.finish_inline(status),
        }
    }
}

/// A receive waiting for the data frames of a rendezvous.
pub(crate) struct PendingRecv {
    buf: *mut u8,
    /// Bytes expected and bytes arrived.
    want: usize,
    got: usize,
    status: Status,
    finish: Finish,
}

// SAFETY: the buffers belong to operations in flight whose owners keep them valid
// and untouched until `done` completes; the tables only move them between threads.
unsafe impl Send for PendingSend {}
// SAFETY: as above.
unsafe impl Send for PendingRecv {}

/// The exit status of a process that received a frame breaking the protocol
/// (sysexits' EX_PROTOCOL).
const PROTOCOL_ERROR_STATUS: i32 = 76;

impl Fabric {
    /// Ends the job over a frame from process `from` that breaks the protocol
    /// (`what` it was), with one line and [`PROTOCOL_ERROR_STATUS`]: its
    /// sender is not a correct peer, and nothing it sent can be trusted.
    #[cold]
    fn protocol_error(&self, from: u32, what: std::fmt::Arguments<'_>) -> ! {
        self.link_protocol_error(format_args!("{what} from process {from}"))
    }

    /// [`Fabric::protocol_error`] over a frame whose sender is not known yet
    /// (`what` names the frame and the link).
    #[cold]
    pub(crate) fn link_protocol_error(&self, what: std::fmt::Arguments<'_>) -> ! {
        mpcrs_settings::report!(
            error,
            "mpcrs: process {}: {what} breaks the protocol; ending the job",
            self.me
        );
        crate::process::abort_job(PROTOCOL_ERROR_STATUS)
    }

    /// A frame from process `from`.
    pub(crate) fn on_frame(&self, from: u32, frame: FrameBuf<'_>) {
        let Some((h, header_len)) = Header::decode(frame.bytes()) else {
            self.protocol_error(
                from,
                format_args!("a malformed frame of {} bytes", frame.bytes().len()),
            )
        };
        let mut order = self.inbound[from as usize].lock().unwrap();
        if h.seq != order.expected {
            let (v, at) = frame.keep();
            order.early.insert(h.seq, (h, v, at + header_len));
            return;
        }
        self.handle(&mut order, from, h, frame, header_len);
        order.expected += 1;
        let mut handled = 1;
        loop {
            let next = order.expected;
            let Some((h, f, a)) = order.early.remove(&next) else {
                break;
            };
            self.handle(&mut order, from, h, FrameBuf::Owned(f, 0), a);
            order.expected += 1;
            handled += 1;
        }
        self.frames_handled
            .fetch_add(handled, std::sync::atomic::Ordering::Release);
    }

    /// Acts on a frame in its turn (of its sender's `order`); its payload
    /// starts `at` bytes into it.
    fn handle(&self, order: &mut Reorder, from: u32, h: Header, frame: FrameBuf<'_>, at: usize) {
        match h.kind {
            Kind::Eager | Kind::Rts => {
                let mut msg = Arrival {
                    from,
                    header: h,
                    frame,
                    at,
                    generation: self.generation.load(std::sync::atomic::Ordering::Acquire),
                };
                let version = self.registry.version();
                let known = order
                    .last
                    .as_ref()
                    .is_some_and(|l| l.context == h.context && l.version == version);
                if !known {
                    let Some((comm, m)) = self.registry.find_or_hold(h.context, msg) else {
                        return;
                    };
                    msg = m;
                    order.last = Some(LastComm {
                        context: h.context,
                        version,
                        comm,
                    });
                }
                order.last.as_ref().expect("found above").comm.arrive(msg);
            }
            Kind::Cts => {
                let Some(send) = self.sends.lock().unwrap().remove(&h.id) else {
                    self.protocol_error(from, format_args!("a CTS for unknown send {}", h.id))
                };
                self.defer(Deferred::Data {
                    to: from,
                    token: h.token,
                    buf: send.buf,
                    len: send.len.min(h.len as usize),
                    done: send.done,
                });
            }
            Kind::Data => {
                let mut recvs = self.recvs.lock().unwrap();
                let Some(r) = recvs.get_mut(&h.id) else {
                    self.protocol_error(from, format_args!("data for unknown receive {}", h.id))
                };
                let chunk = frame.bytes().get(at..).unwrap_or(&[]);
                let offset = h.addr as usize;
                if offset
                    .checked_add(chunk.len())
                    .is_none_or(|end| end > r.want)
                {
                    let want = r.want;
                    drop(recvs);
                    self.protocol_error(
                        from,
                        format_args!(
                            "{} bytes of data at {offset} for a receive of {want}",
                            chunk.len()
                        ),
                    )
                }
                // SAFETY: the receive's buffer holds `want` bytes (checked range) and
                // stays valid until its completion is set (PendingRecv contract).
                unsafe {
                    std::ptr::copy_nonoverlapping(chunk.as_ptr(), r.buf.add(offset), chunk.len())
                };
                r.got += chunk.len();
                if r.got == r.want {
                    let r = recvs.remove(&h.id).expect("present");
                    drop(recvs);
                    r.finish.complete(r.status);
                }
            }
            Kind::Fin => {
                let Some(send) = self.sends.lock().unwrap().remove(&h.id) else {
                    self.protocol_error(from, format_args!("a FIN for unknown send {}", h.id))
                };
                send.done.complete(Status::empty());
            }
            Kind::Cancel => {
                if self.registry.withdraw(h.context, h.dest, from, h.id) {
                    let mut answer = Header::new(Kind::Cancelled);
                    answer.id = h.id;
                    self.defer(Deferred::Frame {
                        to: from,
                        header: answer,
                    });
                }
                // Otherwise it matched already: its CTS or FIN ends the send.
            }
            Kind::Cancelled => {
                let Some(send) = self.sends.lock().unwrap().remove(&h.id) else {
                    self.protocol_error(
                        from,
                        format_args!("a cancel answer for unknown send {}", h.id),
                    )
                };
                send.done.complete(Status::cancelled());
            }
        }
    }

    /// Copies the eager message of header `h` from process `from`, whose bytes
    /// are `payload`, into `capacity` bytes at `buf` and answers a synchronous
    /// sender; returns the receive's status.
    ///
    /// # Safety
    /// `buf` valid for `capacity` bytes, and used by nobody else, during the call.
    unsafe fn receive_eager(
        &self,
        from: u32,
        h: &Header,
        payload: &[u8],
        buf: *mut u8,
        capacity: usize,
    ) -> Status {
        let n = (h.len as usize).min(capacity);
        assert!(n <= payload.len(), "eager frame shorter than its message");
        // SAFETY: `payload` holds `n` bytes (checked); `buf` by contract.
        unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), buf, n) };
        self.answer_fin(from, h);
        Status::received(h.source, h.tag, h.len as usize, capacity)
    }

    /// Receives the eager message `msg` into `capacity` bytes at `buf` now (and
    /// answers a synchronous sender); returns the receive's status.
    ///
    /// # Safety
    /// `buf` valid for `capacity` bytes, and used by nobody else, during the call.
    pub(crate) unsafe fn receive_now(
        &self,
        msg: &Arrival<'_>,
        buf: *mut u8,
        capacity: usize,
    ) -> Status {
        debug_assert!(msg.is_eager());
        // SAFETY: forwarded from this function's contract.
        unsafe { self.receive_eager(msg.from, &msg.header, msg.payload(), buf, capacity) }
    }

    /// Tells a sender waiting for its receiver (synchronous or rendezvous) that
    /// the message of header `h` from process `from` was received.
    fn answer_fin(&self, from: u32, h: &Header) {
        if h.id != 0 {
            let mut fin = Header::new(Kind::Fin);
            fin.id = h.id;
            self.defer(Deferred::Frame {
                to: from,
                header: fin,
            });
        }
    }

    /// Receives `msg` into `capacity` bytes at `buf`, reporting to `finish` when
    /// the data is there (at once, unless it must come in data frames).
    ///
    /// # Safety
    /// `buf` valid for `capacity` bytes, and used by nobody else, until `finish`
    /// is reported.
    pub(crate) unsafe fn receive(
        &self,
        msg: Incoming,
        buf: *mut u8,
        capacity: usize,
        finish: Finish,
    ) {
        let h = msg.header;
        let status = Status::received(h.source, h.tag, h.len as usize, capacity);
        let n = (h.len as usize).min(capacity);
        match h.kind {
            Kind::Eager => {
                // SAFETY: forwarded from this function's contract.
                let status =
                    unsafe { self.receive_eager(msg.from, &h, msg.payload(), buf, capacity) };
                finish.complete(status);
            }
            Kind::Rts => {
                if n == 0 {
                    self.answer_fin(msg.from, &h);
                    finish.complete(status);
                    return;
                }
                // A notice from before a restart names a process that is gone: its
                // data comes in data frames.
                let same_run =
                    msg.generation == self.generation.load(std::sync::atomic::Ordering::Acquire);
                if h.pid != 0 && same_run && h.node == self.net().node {
                    // SAFETY: `buf` holds `capacity` >= n bytes by contract.
                    let dst = unsafe { std::slice::from_raw_parts_mut(buf, n) };
                    if mpcrs_rails::shm::read_remote(h.pid as i32, h.addr as usize, dst).is_ok() {
                        self.cross_memory_bytes
                            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
                        self.answer_fin(msg.from, &h);
                        finish.complete(status);
                        return;
                    }
                }
                let token = self.new_id();
                self.recvs.lock().unwrap().insert(
                    token,
                    PendingRecv {
                        buf,
                        want: n,
                        got: 0,
                        status,
                        finish,
                    },
                );
                let mut cts = Header::new(Kind::Cts);
                cts.id = h.id;
                cts.token = token;
                cts.len = n as u64;
                self.defer(Deferred::Frame {
                    to: msg.from,
                    header: cts,
                });
            }
            _ => unreachable!("only eager frames and RTS wait for a receive"),
        }
    }
}

/// Communicators spanning processes by context id, so arriving frames find their
/// mailboxes; frames for a communicator this process has not created yet wait.
///
/// A new communicator is held here by a strong reference until every member of
/// this process has joined it: a member can join, use and free it before
/// another has joined (a creation is an allgather, not a barrier), and a
/// communicator dropped in between would take the late member's mailbox, and
/// the messages already delivered to it, along.
#[derive(Default)]
pub(crate) struct Registry {
    inner: std::sync::Mutex<RegistryInner>,
    version: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
struct RegistryInner {
    comms: rustc_hash::FxHashMap<u64, std::sync::Weak<dyn Endpoint>>,
    /// Communicators some members of this process have still to join, with
    /// how many.
    joining: rustc_hash::FxHashMap<u64, (Arc<dyn Endpoint>, usize)>,
    waiting: rustc_hash::FxHashMap<u64, Vec<Incoming>>,
    /// Size of `comms` at which entries of freed communicators are dropped.
    prune_at: usize,
}

impl Registry {
    /// Forgets every communicator and every message held for one (a new run
    /// of the job, remote/runs.rs).
    pub(crate) fn clear(&self) {
        self.inner.clear_poison();
        *self.inner.lock().unwrap() = RegistryInner::default();
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Bumped whenever a communicator is added: a communicator found before
    /// is still the one of its context while this is unchanged.
    fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The communicator of `context`, or `None` after keeping `msg` for it.
    fn find_or_hold<'a>(
        &self,
        context: u64,
        msg: Arrival<'a>,
    ) -> Option<(Arc<dyn Endpoint>, Arrival<'a>)> {
        let mut r = self.inner.lock().unwrap();
        match r.comms.get(&context).and_then(|w| w.upgrade()) {
            Some(c) => Some((c, msg)),
            None => {
                r.waiting.entry(context).or_default().push(msg.keep());
                None
            }
        }
    }

    /// This process's object of the communicator `context`, which `joins`
    /// calls of this process ask for (one per local member): the one an
    /// earlier call made, or a new one made by `make`, which then receives
    /// what arrived for it early.
    pub(crate) fn get_or_make<E: Endpoint>(
        &self,
        context: u64,
        joins: usize,
        make: impl FnOnce() -> Arc<E>,
    ) -> Arc<E> {
        // Endpoints of one process are all of the MPI layer's one type.
        let concrete = |c: Arc<dyn Endpoint>| -> Arc<E> {
            let any: Arc<dyn std::any::Any + Send + Sync> = c;
            any.downcast::<E>()
                .unwrap_or_else(|_| unreachable!("one type of endpoint per process"))
        };
        let mut r = self.inner.lock().unwrap();
        if let Some((c, left)) = r.joining.get_mut(&context) {
            let c = c.clone();
            *left -= 1;
            if *left == 0 {
                r.joining.remove(&context);
            }
            return concrete(c);
        }
        if let Some(c) = r.comms.get(&context).and_then(|w| w.upgrade()) {
            return concrete(c);
        }
        let c = make();
        if r.comms.len() >= r.prune_at {
            r.comms.retain(|_, w| w.strong_count() > 0);
            r.prune_at = (2 * r.comms.len()).max(64);
        }
        let endpoint: Arc<dyn Endpoint> = c.clone();
        r.comms.insert(context, Arc::downgrade(&endpoint));
        if joins > 1 {
            r.joining.insert(context, (endpoint, joins - 1));
        }
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        // Under the lock: frames arriving meanwhile wait for these, in order.
        for msg in r.waiting.remove(&context).unwrap_or_default() {
            c.arrive(msg.into_arrival());
        }
        c
    }
}

impl Registry {
    /// Withdraws the unmatched message `id` from process `from` to rank `dest`
    /// of communicator `context` (its sender cancelled it); false if it is not
    /// waiting any more (matched, or taken by a matched probe).
    fn withdraw(&self, context: u64, dest: u32, from: u32, id: u64) -> bool {
        let mut r = self.inner.lock().unwrap();
        if let Some(comm) = r.comms.get(&context).and_then(|w| w.upgrade()) {
            drop(r);
            return comm.withdraw(dest, from, id);
        }
        // Held for a communicator this process has not made yet.
        let Some(held) = r.waiting.get_mut(&context) else {
            return false;
        };
        let Some(i) = held
            .iter()
            .position(|m| m.from == from && m.header.id == id)
        else {
            return false;
        };
        held.remove(i);
        true
    }
}
