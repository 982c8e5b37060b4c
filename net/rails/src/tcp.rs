//! The tcp driver: non-blocking sockets (socket2) carrying length-prefixed frames,
//! driven by the scheduler's progress hooks (no thread of its own). A [`TcpRail`]
//! owns a listening socket and its endpoints; polling it accepts connections,
//! flushes queued frames and hands complete incoming frames to the rail's sink.
//! A poll asks the kernel once which sockets have input ([`Readiness`]) and
//! touches only those.
//!
//! Every connection, accepted or opened, first runs the job's handshake
//! (mpcrs-auth): until the peer proved it knows the job's secret, nothing it
//! sends reaches the sink, frames longer than a handshake's are refused unread,
//! and nothing queued on our side but the handshake goes out. An accepted
//! connection that fails is closed and counted ([`TcpRail::refused`]); the job
//! goes on. A connection we opened that fails is an error: the address came
//! from the job's own key-value store.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use mpcrs_auth::{Handshake, JobSecret, Reply, Role};
use socket2::{Domain, Protocol, Socket, Type};

use crate::readiness::Readiness;

/// Where incoming frames go: (endpoint id, frame).
pub type Sink = Box<dyn Fn(usize, Vec<u8>) + Send + Sync>;

/// One connection and its queues.
struct Endpoint {
    stream: TcpStream,
    out: VecDeque<Vec<u8>>,
    /// Bytes of the front frame already written.
    out_at: usize,
    inbuf: Vec<u8>,
    /// What one read takes in, made once: a fresh zeroed buffer per poll
    /// cost more than the read itself.
    scratch: Box<[u8]>,
    closed: bool,
    /// Why a trusted connection ended, if not by the peer's orderly close
    /// (a reset, a broken pipe).
    broken: Option<io::Error>,
    /// Until the peer proved it belongs to the job.
    pending: Option<Pending>,
    role: Role,
}

/// An endpoint's handshake, and the frames queued on it meanwhile.
struct Pending {
    handshake: Handshake,
    held: VecDeque<Vec<u8>>,
}

/// Bytes one read of a socket takes at most.
const READ_BYTES: usize = 64 * 1024;

/// Why an endpoint's peer is not let in.
enum Untrusted {
    Refused(mpcrs_auth::Refusal),
    Io(io::Error),
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Untrusted::Refused(r) => write!(f, "{r}"),
            Untrusted::Io(e) => write!(f, "{e} during the handshake"),
        }
    }
}

impl Endpoint {
    /// A connection whose handshake starts now (its challenge queued first).
    fn new(stream: TcpStream, secret: &JobSecret, role: Role) -> io::Result<Endpoint> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        let (handshake, challenge) = Handshake::start(secret, role)?;
        Ok(Endpoint {
            stream,
            out: VecDeque::from([framed(&[&challenge])?]),
            out_at: 0,
            inbuf: Vec::new(),
            scratch: vec![0u8; READ_BYTES].into_boxed_slice(),
            closed: false,
            broken: None,
            pending: Some(Pending {
                handshake,
                held: VecDeque::new(),
            }),
            role,
        })
    }

    /// Queues a frame: out now, or once the handshake is over.
    fn queue(&mut self, msg: Vec<u8>) {
        match &mut self.pending {
            Some(p) => p.held.push_back(msg),
            None => self.out.push_back(msg),
        }
    }

    /// Writes what the socket takes; returns whether anything moved.
    fn flush(&mut self) -> io::Result<bool> {
        let mut moved = false;
        while let Some(front) = self.out.front() {
            match self.stream.write(&front[self.out_at..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "connection closed",
                    ))
                }
                Ok(n) => {
                    moved = true;
                    self.out_at += n;
                    if self.out_at == front.len() {
                        self.out.pop_front();
                        self.out_at = 0;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(moved)
    }

    /// Reads what is there into the input buffer.
    fn read(&mut self) -> io::Result<()> {
        loop {
            match self.stream.read(&mut self.scratch) {
                Ok(0) => {
                    self.closed = true;
                    return Ok(());
                }
                Ok(n) => self.inbuf.extend_from_slice(&self.scratch[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if self.pending.is_none() => {
                    self.end_broken(e);
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Ends a trusted connection that failed (reported as [`Ended`]).
    fn end_broken(&mut self, e: io::Error) {
        self.closed = true;
        self.out.clear();
        self.broken.get_or_insert(e);
    }

    /// Takes the complete frames of the input buffer: the handshake's to the
    /// handshake, the others into `frames` once the peer is trusted.
    fn take_frames(
        &mut self,
        id: usize,
        frames: &mut Vec<(usize, Vec<u8>)>,
    ) -> Result<(), Untrusted> {
        let mut at = 0;
        let result = loop {
            let rest = &self.inbuf[at..];
            if rest.len() < 4 {
                break Ok(());
            }
            let len = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
            if self.pending.is_some() && len > mpcrs_auth::MAX_FRAME {
                break Err(Untrusted::Refused(mpcrs_auth::Refusal::NotAHandshake {
                    bytes: len,
                }));
            }
            if rest.len() - 4 < len {
                break Ok(());
            }
            let frame = &rest[4..4 + len];
            at += 4 + len;
            let Some(p) = &mut self.pending else {
                frames.push((id, frame.to_vec()));
                continue;
            };
            match p.handshake.take(frame) {
                Ok(Reply::Send(proof)) => match framed(&[&proof]) {
                    Ok(f) => self.out.push_back(f),
                    Err(e) => break Err(Untrusted::Io(e)),
                },
                Ok(Reply::Trusted) => {
                    let held = std::mem::take(&mut p.held);
                    self.out.extend(held);
                    self.pending = None;
                }
                Err(r) => break Err(Untrusted::Refused(r)),
            }
        };
        self.inbuf.drain(..at);
        result
    }
}

/// `parts` one after the other behind their total length, as the wire has it.
fn framed(parts: &[&[u8]]) -> io::Result<Vec<u8>> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let len32 = u32::try_from(len).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{len}-byte frame over tcp (limit 4 GiB)"),
        )
    })?;
    let mut msg = Vec::with_capacity(len + 4);
    msg.extend_from_slice(&len32.to_le_bytes());
    for p in parts {
        msg.extend_from_slice(p);
    }
    Ok(msg)
}

struct State {
    /// By id; `None` once refused (its socket closed).
    endpoints: Vec<Option<Endpoint>>,
    /// Trusted connections that ended, not yet taken.
    closed: Vec<Ended>,
    /// Keys of the sockets found ready by the last look (kept for its capacity).
    ready: Vec<u64>,
}

/// A trusted connection that ended: by the peer's orderly close (`broken`
/// `None`: its end of file after its last frame), or by an error (a reset, a
/// broken pipe: a peer that died with bytes unread, or a write to a peer gone).
#[derive(Debug)]
pub struct Ended {
    pub endpoint: usize,
    pub broken: Option<io::Error>,
}

/// The listener's key in the readiness set; an endpoint's key is its id.
const LISTENER: u64 = u64::MAX;

/// A tcp rail of this process: a listener and the endpoints it made or accepted.
pub struct TcpRail {
    listener: Socket,
    addr: SocketAddr,
    readiness: Readiness,
    secret: JobSecret,
    state: Mutex<State>,
    /// Held by the one thread progressing, from reading to delivering, so that
    /// frames of an endpoint reach the sink in the order they arrived.
    delivering: Mutex<()>,
    sink: Sink,
    refused: AtomicU64,
    /// Whether `State::closed` holds any (read without the lock each round).
    any_closed: AtomicBool,
}

impl TcpRail {
    /// Listens on `host` (an ephemeral port) for peers that know `secret`;
    /// incoming frames go to `sink`.
    pub fn bind(host: std::net::IpAddr, secret: &JobSecret, sink: Sink) -> io::Result<TcpRail> {
        let addr = SocketAddr::new(host, 0);
        let listener = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        listener.set_reuse_address(true)?;
        listener.bind(&addr.into())?;
        listener.listen(128)?;
        listener.set_nonblocking(true)?;
        let addr = listener
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::other("listener without an inet address"))?;
        let readiness = Readiness::new()?;
        readiness.watch(listener.as_raw_fd(), LISTENER)?;
        Ok(TcpRail {
            listener,
            addr,
            readiness,
            secret: secret.clone(),
            state: Mutex::new(State {
                endpoints: Vec::new(),
                closed: Vec::new(),
                ready: Vec::new(),
            }),
            delivering: Mutex::new(()),
            sink,
            refused: AtomicU64::new(0),
            any_closed: AtomicBool::new(false),
        })
    }

    /// The address other processes connect to (published in the key-value store).
    pub fn address(&self) -> SocketAddr {
        self.addr
    }

    /// Opens an endpoint to `addr`; returns its id. Frames sent on it leave
    /// once the peer proved it belongs to the job.
    pub fn connect(&self, addr: SocketAddr) -> io::Result<usize> {
        let stream = TcpStream::connect(addr)?;
        let ep = Endpoint::new(stream, &self.secret, Role::Connector)?;
        let mut st = self.state.lock().unwrap();
        let id = self.add(&mut st, ep)?;
        // Our challenge goes now.
        st.endpoints[id].as_mut().unwrap().flush()?;
        Ok(id)
    }

    /// Makes `ep` an endpoint of the rail, watched for input; returns its id.
    fn add(&self, st: &mut State, ep: Endpoint) -> io::Result<usize> {
        let id = st.endpoints.len();
        self.readiness.watch(ep.stream.as_raw_fd(), id as u64)?;
        st.endpoints.push(Some(ep));
        Ok(id)
    }

    /// Queues one frame on endpoint `id` and writes what the socket takes now.
    pub fn send(&self, id: usize, frame: &[u8]) -> io::Result<()> {
        self.send_parts(id, &[frame])
    }

    /// [`TcpRail::send`] of the frame made of `parts` one after the other.
    pub fn send_parts(&self, id: usize, parts: &[&[u8]]) -> io::Result<()> {
        let msg = framed(parts)?;
        let mut st = self.state.lock().unwrap();
        let ep = st
            .endpoints
            .get_mut(id)
            .and_then(Option::as_mut)
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("no tcp endpoint {id}"))
            })?;
        if ep.closed {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                format!("tcp endpoint {id}: the connection ended"),
            ));
        }
        ep.queue(msg);
        match ep.flush() {
            Ok(_) => Ok(()),
            Err(e) if ep.pending.is_none() => {
                // Told by the next round's take_ended, as a read's end is.
                ep.end_broken(e);
                let fd = ep.stream.as_raw_fd();
                self.readiness.forget(fd);
                let broken = ep.broken.take();
                st.closed.push(Ended {
                    endpoint: id,
                    broken,
                });
                self.any_closed.store(true, Ordering::Release);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Endpoints whose peer proved it belongs to the job.
    pub fn endpoints(&self) -> usize {
        let st = self.state.lock().unwrap();
        st.endpoints
            .iter()
            .flatten()
            .filter(|ep| ep.pending.is_none())
            .count()
    }

    /// Whether endpoint `id`'s peer proved it belongs to the job.
    pub fn is_trusted(&self, id: usize) -> bool {
        let st = self.state.lock().unwrap();
        st.endpoints
            .get(id)
            .and_then(Option::as_ref)
            .is_some_and(|ep| ep.pending.is_none())
    }

    /// Trusted connections that ended since the last call, each told after
    /// every frame its peer sent before the end reached the sink.
    pub fn take_ended(&self) -> Vec<Ended> {
        // A load first: every progress round asks, and nearly always in vain.
        if !self.any_closed.load(Ordering::Acquire)
            || !self.any_closed.swap(false, Ordering::AcqRel)
        {
            return Vec::new();
        }
        std::mem::take(&mut self.state.lock().unwrap().closed)
    }

    /// Whether frames queued on trusted endpoints are still to be written.
    pub fn unsent(&self) -> bool {
        let st = self.state.lock().unwrap();
        st.endpoints
            .iter()
            .flatten()
            .any(|ep| ep.pending.is_none() && !ep.closed && !ep.out.is_empty())
    }

    /// Connections accepted and then closed because the peer did not prove it
    /// belongs to the job (or broke off before it did).
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Closes endpoint `id`, whose peer is not let in: an accepted one is
    /// counted and forgotten; one we opened is an error.
    fn refuse(&self, st: &mut State, id: usize, why: Untrusted) -> io::Result<()> {
        let ep = st.endpoints[id].take().expect("a refused endpoint is open");
        self.readiness.forget(ep.stream.as_raw_fd());
        let _ = ep.stream.shutdown(std::net::Shutdown::Both);
        match ep.role {
            Role::Acceptor => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(
                    endpoint = id,
                    "tcp rail {}: refused a connection: {why}",
                    self.addr
                );
                Ok(())
            }
            Role::Connector => {
                let peer = ep
                    .stream
                    .peer_addr()
                    .map_or_else(|_| "a peer".to_string(), |a| a.to_string());
                Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{peer} did not prove it belongs to the job: {why}"),
                ))
            }
        }
    }

    /// One round of progress: accept, flush, receive. Returns whether anything
    /// happened, and the first I/O error met.
    pub fn progress(&self) -> io::Result<bool> {
        let Ok(_turn) = self.delivering.try_lock() else {
            // Another thread is progressing (or the sink called us): its frames
            // must be delivered before any read later.
            return Ok(false);
        };
        let mut moved = false;
        let mut delivered = Vec::new();
        let mut closed = Vec::new();
        {
            let mut st = self.state.lock().unwrap();
            let mut ready = std::mem::take(&mut st.ready);
            self.readiness.ready(&mut ready)?;
            if ready.contains(&LISTENER) {
                loop {
                    match self.listener.accept() {
                        Ok((sock, _)) => {
                            let mut ep = Endpoint::new(sock.into(), &self.secret, Role::Acceptor)?;
                            // Our challenge goes now; a peer gone already is
                            // refused at its first read.
                            let _ = ep.flush();
                            self.add(&mut st, ep)?;
                            moved = true;
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) => return Err(e),
                    }
                }
            }
            for id in 0..st.endpoints.len() {
                let Some(ep) = st.endpoints[id].as_mut() else {
                    continue;
                };
                if ep.closed || ep.out.is_empty() {
                    continue;
                }
                match ep.flush() {
                    Ok(m) => moved |= m,
                    Err(e) if ep.pending.is_some() => self.refuse(&mut st, id, Untrusted::Io(e))?,
                    Err(e) => {
                        ep.end_broken(e);
                        self.readiness.forget(ep.stream.as_raw_fd());
                        closed.push(Ended {
                            endpoint: id,
                            broken: ep.broken.take(),
                        });
                    }
                }
            }
            for &key in ready.iter().filter(|&&k| k != LISTENER) {
                let id = key as usize;
                let Some(ep) = st.endpoints[id].as_mut() else {
                    continue;
                };
                if ep.closed {
                    continue;
                }
                let taken = match ep.read() {
                    Ok(()) => ep.take_frames(id, &mut delivered),
                    Err(e) if ep.pending.is_some() => Err(Untrusted::Io(e)),
                    Err(e) => return Err(e),
                };
                if let Err(why) = taken {
                    self.refuse(&mut st, id, why)?;
                    continue;
                }
                if ep.pending.is_some() && ep.closed {
                    self.refuse(
                        &mut st,
                        id,
                        Untrusted::Io(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "connection closed",
                        )),
                    )?;
                    continue;
                }
                if !ep.out.is_empty() {
                    // A proof, or what waited for the handshake's end.
                    match ep.flush() {
                        Ok(m) => moved |= m,
                        Err(e) if ep.pending.is_some() => {
                            self.refuse(&mut st, id, Untrusted::Io(e))?;
                            continue;
                        }
                        Err(e) => ep.end_broken(e),
                    }
                }
                if ep.closed {
                    self.readiness.forget(ep.stream.as_raw_fd());
                    closed.push(Ended {
                        endpoint: id,
                        broken: ep.broken.take(),
                    });
                }
            }
            st.ready = ready;
        }
        // Frames are handed out without the lock: the sink may send.
        moved |= !delivered.is_empty();
        for (id, f) in delivered {
            (self.sink)(id, f);
        }
        // Told only now: what the peer sent before closing is delivered.
        if !closed.is_empty() {
            self.state.lock().unwrap().closed.extend(closed);
            self.any_closed.store(true, Ordering::Release);
        }
        Ok(moved)
    }
}

impl mpcrs_scheduler::Progress for TcpRail {
    fn poll(&self, _worker: usize) -> bool {
        // A broken connection is the job's end; the launcher reports the process.
        self.progress()
            .unwrap_or_else(|e| panic!("tcp rail {}: {e}", self.addr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn frames_of_any_size_cross_loopback_in_order_driven_by_progress_hooks() {
        let sched = mpcrs_scheduler::Scheduler::builder()
            .workers(2)
            .build()
            .unwrap();
        let h = sched.handle();
        let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::new(Mutex::new(Vec::new()));
        let r2 = received.clone();
        let done = Arc::new(mpcrs_scheduler::sync::Event::new());
        let total = 200;
        let count = Arc::new(AtomicUsize::new(0));
        let (d2, c2) = (done.clone(), count.clone());
        let secret = JobSecret::generate().unwrap();
        let b = Arc::new(
            TcpRail::bind(
                "127.0.0.1".parse().unwrap(),
                &secret,
                Box::new(move |_, f| {
                    r2.lock().unwrap().push(f);
                    if c2.fetch_add(1, Ordering::SeqCst) + 1 == total {
                        d2.set();
                    }
                }),
            )
            .unwrap(),
        );
        let a = Arc::new(
            TcpRail::bind("127.0.0.1".parse().unwrap(), &secret, Box::new(|_, _| {})).unwrap(),
        );
        h.add_progress_hook(a.clone());
        h.add_progress_hook(b.clone());
        let id = a.connect(b.address()).unwrap();
        let frames: Vec<Vec<u8>> = (0..total)
            .map(|i| (0..(i * 7919) % (1 << 20)).map(|j| (i + j) as u8).collect())
            .collect();
        let expect = frames.clone();
        let sender = h.spawn_on(0, move || {
            for f in &frames {
                a.send(id, f).unwrap();
                mpcrs_scheduler::yield_now();
            }
        });
        let waiter = h.spawn_on(1, move || done.wait());
        sender.join().unwrap();
        waiter.join().unwrap();
        assert_eq!(*received.lock().unwrap(), expect);
        assert_eq!(b.endpoints(), 1);
    }

    /// A rail receiving into a list, and a way to drive it until `until` holds.
    fn receiving(secret: &JobSecret) -> (Arc<TcpRail>, Arc<Mutex<Vec<Vec<u8>>>>) {
        let got: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let g = got.clone();
        let rail = TcpRail::bind(
            "127.0.0.1".parse().unwrap(),
            secret,
            Box::new(move |_, f| g.lock().unwrap().push(f)),
        )
        .unwrap();
        (Arc::new(rail), got)
    }

    fn drive(rails: &[&TcpRail], until: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !until() {
            assert!(
                std::time::Instant::now() < deadline,
                "nothing happened in 10 s"
            );
            for r in rails {
                r.progress().unwrap();
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn raw_frame(bytes: &[u8]) -> Vec<u8> {
        framed(&[bytes]).unwrap()
    }

    #[test]
    fn strangers_are_refused_and_counted_while_the_job_s_peer_gets_through() {
        let secret = JobSecret::generate().unwrap();
        let (b, got) = receiving(&secret);
        // A stranger that says nothing, one that sends a plausible data frame
        // before any handshake, one that announces a huge frame, one that
        // answers with garbage.
        let silent = TcpStream::connect(b.address()).unwrap();
        let mut data_first = TcpStream::connect(b.address()).unwrap();
        data_first
            .write_all(&raw_frame(b"\x02 data before hello"))
            .unwrap();
        let mut huge = TcpStream::connect(b.address()).unwrap();
        huge.write_all(&u32::MAX.to_le_bytes()).unwrap();
        let mut garbage = TcpStream::connect(b.address()).unwrap();
        garbage.write_all(&[0x5a; 300]).unwrap();
        drive(&[&b], || b.refused() == 3);
        // The job's own peer, meanwhile, gets its frames in.
        let (a, _) = receiving(&secret);
        let id = a.connect(b.address()).unwrap();
        a.send(id, b"first").unwrap();
        a.send(id, b"second").unwrap();
        drive(&[&a, &b], || got.lock().unwrap().len() == 2);
        assert_eq!(
            *got.lock().unwrap(),
            vec![b"first".to_vec(), b"second".to_vec()]
        );
        assert_eq!(b.endpoints(), 1, "only the job's peer is trusted");
        // The silent stranger is refused once it leaves.
        drop(silent);
        drive(&[&b], || b.refused() == 4);
    }

    /// Drives `rail` until a connection ended; returns that report.
    fn next_ended(rail: &TcpRail) -> Ended {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            assert!(std::time::Instant::now() < deadline, "no connection ended");
            rail.progress().unwrap();
            if let Some(e) = rail.take_ended().pop() {
                return e;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn a_connection_s_end_is_told_after_its_frames_orderly_or_broken() {
        let secret = JobSecret::generate().unwrap();
        let (b, got) = receiving(&secret);
        // An orderly close: the last frame first, then the end without error.
        let (a, _) = receiving(&secret);
        let id = a.connect(b.address()).unwrap();
        a.send(id, b"last words").unwrap();
        drive(&[&a, &b], || {
            b.endpoints() == 1 && a.is_trusted(id) && !a.unsent() && !b.unsent()
        });
        // Whatever the handshake left in a's socket is read.
        for _ in 0..20 {
            a.progress().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        drop(a);
        let ended = next_ended(&b);
        assert!(ended.broken.is_none(), "{ended:?}");
        assert_eq!(*got.lock().unwrap(), vec![b"last words".to_vec()]);
        assert!(b.take_ended().is_empty(), "told once");
        // A peer that goes with bytes of ours unread resets the connection.
        let (c, _) = receiving(&secret);
        let id = c.connect(b.address()).unwrap();
        drive(&[&b, &c], || b.endpoints() == 2 && c.is_trusted(id));
        let ep = (0..4)
            .find(|&e| b.is_trusted(e) && e != ended.endpoint)
            .unwrap();
        b.send(ep, &[7; 1000]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(c);
        let ended = next_ended(&b);
        assert_eq!(ended.endpoint, ep);
        assert_eq!(
            ended.broken.map(|e| e.kind()),
            Some(io::ErrorKind::ConnectionReset)
        );
        // Sending on it is an error, not a frame lost in silence.
        let e = b.send(ep, b"anyone?").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotConnected);
    }

    #[test]
    fn a_forged_handshake_is_refused_and_opening_a_link_to_a_stranger_fails() {
        let secret = JobSecret::generate().unwrap();
        let (b, got) = receiving(&secret);
        // A peer with another secret runs the handshake faithfully.
        let (forger, _) = receiving(&JobSecret::generate().unwrap());
        let id = forger.connect(b.address()).unwrap();
        forger.send(id, b"let me in").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let err = loop {
            assert!(std::time::Instant::now() < deadline);
            b.progress().unwrap();
            if let Err(e) = forger.progress() {
                break e;
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert!(
            err.to_string()
                .contains("did not prove it belongs to the job"),
            "{err}"
        );
        drive(&[&b], || b.refused() == 1);
        assert!(got.lock().unwrap().is_empty());
    }
}
