//! The tcp driver: non-blocking sockets (socket2) carrying length-prefixed frames,
//! driven by the scheduler's progress hooks (no thread of its own). A [`TcpRail`]
//! owns a listening socket and its endpoints; polling it accepts connections,
//! flushes queued frames and hands complete incoming frames to the rail's sink.
//! A poll asks the kernel once which sockets have input ([`Readiness`]) and
//! touches only those.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Mutex;

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
}

/// Bytes one read of a socket takes at most.
const READ_BYTES: usize = 64 * 1024;

impl Endpoint {
    fn new(stream: TcpStream) -> io::Result<Endpoint> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        Ok(Endpoint {
            stream,
            out: VecDeque::new(),
            out_at: 0,
            inbuf: Vec::new(),
            scratch: vec![0u8; READ_BYTES].into_boxed_slice(),
            closed: false,
        })
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

    /// Reads what is there; returns the complete frames.
    fn receive(&mut self) -> io::Result<Vec<Vec<u8>>> {
        loop {
            match self.stream.read(&mut self.scratch) {
                Ok(0) => {
                    self.closed = true;
                    break;
                }
                Ok(n) => self.inbuf.extend_from_slice(&self.scratch[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        let mut frames = Vec::new();
        let mut at = 0;
        while self.inbuf.len() - at >= 4 {
            let len = u32::from_le_bytes(self.inbuf[at..at + 4].try_into().unwrap()) as usize;
            if self.inbuf.len() - at - 4 < len {
                break;
            }
            frames.push(self.inbuf[at + 4..at + 4 + len].to_vec());
            at += 4 + len;
        }
        self.inbuf.drain(..at);
        Ok(frames)
    }
}

struct State {
    endpoints: Vec<Endpoint>,
    /// Keys of the sockets found ready by the last look (kept for its capacity).
    ready: Vec<u64>,
}

/// The listener's key in the readiness set; an endpoint's key is its id.
const LISTENER: u64 = u64::MAX;

/// A tcp rail of this process: a listener and the endpoints it made or accepted.
pub struct TcpRail {
    listener: Socket,
    addr: SocketAddr,
    readiness: Readiness,
    state: Mutex<State>,
    /// Held by the one thread progressing, from reading to delivering, so that
    /// frames of an endpoint reach the sink in the order they arrived.
    delivering: Mutex<()>,
    sink: Sink,
}

impl TcpRail {
    /// Listens on `host` (an ephemeral port); incoming frames go to `sink`.
    pub fn bind(host: std::net::IpAddr, sink: Sink) -> io::Result<TcpRail> {
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
            state: Mutex::new(State {
                endpoints: Vec::new(),
                ready: Vec::new(),
            }),
            delivering: Mutex::new(()),
            sink,
        })
    }

    /// The address other processes connect to (published in the key-value store).
    pub fn address(&self) -> SocketAddr {
        self.addr
    }

    /// Opens an endpoint to `addr`; returns its id.
    pub fn connect(&self, addr: SocketAddr) -> io::Result<usize> {
        let stream = TcpStream::connect(addr)?;
        let ep = Endpoint::new(stream)?;
        let mut st = self.state.lock().unwrap();
        self.add(&mut st, ep)
    }

    /// Makes `ep` an endpoint of the rail, watched for input; returns its id.
    fn add(&self, st: &mut State, ep: Endpoint) -> io::Result<usize> {
        let id = st.endpoints.len();
        self.readiness.watch(ep.stream.as_raw_fd(), id as u64)?;
        st.endpoints.push(ep);
        Ok(id)
    }

    /// Queues one frame on endpoint `id` and writes what the socket takes now.
    pub fn send(&self, id: usize, frame: &[u8]) -> io::Result<()> {
        self.send_parts(id, &[frame])
    }

    /// [`TcpRail::send`] of the frame made of `parts` one after the other.
    pub fn send_parts(&self, id: usize, parts: &[&[u8]]) -> io::Result<()> {
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
        let mut st = self.state.lock().unwrap();
        let ep = st.endpoints.get_mut(id).ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("no tcp endpoint {id}"))
        })?;
        ep.out.push_back(msg);
        ep.flush().map(|_| ())
    }

    /// Number of endpoints (connected or accepted).
    pub fn endpoints(&self) -> usize {
        self.state.lock().unwrap().endpoints.len()
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
        {
            let mut st = self.state.lock().unwrap();
            let mut ready = std::mem::take(&mut st.ready);
            self.readiness.ready(&mut ready)?;
            if ready.contains(&LISTENER) {
                loop {
                    match self.listener.accept() {
                        Ok((sock, _)) => {
                            self.add(&mut st, Endpoint::new(sock.into())?)?;
                            moved = true;
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) => return Err(e),
                    }
                }
            }
            for ep in st.endpoints.iter_mut() {
                if !ep.closed && !ep.out.is_empty() {
                    moved |= ep.flush()?;
                }
            }
            for &key in ready.iter().filter(|&&k| k != LISTENER) {
                let id = key as usize;
                let ep = &mut st.endpoints[id];
                if ep.closed {
                    continue;
                }
                for f in ep.receive()? {
                    delivered.push((id, f));
                }
                if ep.closed {
                    self.readiness.forget(ep.stream.as_raw_fd());
                }
            }
            st.ready = ready;
        }
        // Frames are handed out without the lock: the sink may send.
        moved |= !delivered.is_empty();
        for (id, f) in delivered {
            (self.sink)(id, f);
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
        let b = Arc::new(
            TcpRail::bind(
                "127.0.0.1".parse().unwrap(),
                Box::new(move |_, f| {
                    r2.lock().unwrap().push(f);
                    if c2.fetch_add(1, Ordering::SeqCst) + 1 == total {
                        d2.set();
                    }
                }),
            )
            .unwrap(),
        );
        let a = Arc::new(TcpRail::bind("127.0.0.1".parse().unwrap(), Box::new(|_, _| {})).unwrap());
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
}
