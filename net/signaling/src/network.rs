//! The signaling network of one process: a tcp rail whose start-up links follow
//! the topology (ring, none, fully) from the key-value store's `rank:host:port`
//! entries, control messages forwarded hop by hop with [`next_hop`], and direct
//! links opened on demand by a connect request routed over the existing ones.
//!
//! Frames on the rail start with a tag: `HELLO` (the sender's process rank, sent
//! once by whoever opened the connection), `CONTROL` (an encoded [`Control`]) or
//! `DATA` (a frame of the runtime's, when the ring rail carries MPI messages too;
//! handed to the data sink with the process it came from), and `GOODBYE`, a
//! link's last frame from a process that leaves the job in order.
//!
//! A link whose peer closes it without a goodbye lost a process that died
//! (killed, crashed, or its host lost): [`Signaling::progress`] fails with
//! [`Vanished`]. Every process has links to others (ring or fully), so its
//! death is noticed even by processes that never send to it, which another
//! launcher (srun without `-K`) relies on to end the job.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam::queue::SegQueue;
use mpcrs_auth::JobSecret;
use mpcrs_pmi::KeyValueStore;
use mpcrs_rails::tcp::TcpRail;

use crate::control::{Control, ControlKind};
use crate::hello::{hello, hello_from, DATA, GOODBYE};
use crate::route::{
    initial_peers, next_hop, parse_ring_entry, ring_entry, RingEntry, StaticTopology,
};

const CONTROL: u8 = 1;
/// Rail number of the signaling rail itself in connect requests.
pub const SIGNALING_RAIL: u16 = 0;

/// Where data frames go: (sending process, frame, offset of the payload in it).
pub type DataSink = Box<dyn Fn(u32, Vec<u8>, usize) + Send + Sync>;

/// Counters for `--net-stats`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SignalingStats {
    /// Links opened at start-up by the topology.
    pub static_links: u64,
    /// Links opened later by connect requests (either side).
    pub ondemand_links: u64,
    /// Control messages this process originated, forwarded, and received.
    pub sent: u64,
    pub forwarded: u64,
    pub delivered: u64,
    /// Hops of the control messages delivered here: total and longest.
    pub hops_total: u64,
    pub hops_max: u64,
    /// Connections accepted and closed: their peers did not prove they belong
    /// to the job.
    pub refused: u64,
}

#[derive(Default)]
struct Links {
    process_of: HashMap<usize, u32>,
    endpoint_of: HashMap<u32, usize>,
    /// Endpoints whose peer said goodbye.
    departed: std::collections::HashSet<usize>,
}

/// A process of the job whose link closed without a goodbye: it died.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vanished {
    pub process: u32,
}

impl std::fmt::Display for Vanished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "process {} is gone: its link closed without a goodbye (the process was killed \
             or crashed, or its host was lost)",
            self.process
        )
    }
}

impl std::error::Error for Vanished {}

impl Vanished {
    /// The process `e` says vanished, if `e` is a [`Vanished`].
    pub fn of(e: &io::Error) -> Option<&Vanished> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<Vanished>())
    }
}

#[derive(Default)]
struct Counters {
    static_links: AtomicU64,
    ondemand_links: AtomicU64,
    sent: AtomicU64,
    forwarded: AtomicU64,
    delivered: AtomicU64,
    hops_total: AtomicU64,
    hops_max: AtomicU64,
}

/// The signaling network of this process.
pub struct Signaling {
    me: u32,
    count: u32,
    rail: TcpRail,
    arrivals: Arc<SegQueue<(usize, Vec<u8>)>>,
    links: Mutex<Links>,
    inbox: SegQueue<Control>,
    counters: Counters,
    /// Held by the one thread progressing at a time, so that what arrives on a
    /// link is forwarded in the order it came.
    progressing: Mutex<()>,
    /// The topology's links; any other is on demand.
    static_peers: Vec<u32>,
    data_sink: std::sync::OnceLock<DataSink>,
    /// Data frames that arrived before the sink was set.
    early_data: Mutex<Vec<(u32, Vec<u8>)>>,
}

fn timed_out(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what)
}

impl Signaling {
    /// Publishes this process's entry, waits for every process's, and opens the
    /// start-up links of `topology`: a link between two processes is opened by the
    /// lower rank, so each pair has exactly one. Every link proves first that
    /// both ends know the job's `secret`.
    pub fn bootstrap(
        me: u32,
        count: u32,
        host: IpAddr,
        topology: StaticTopology,
        kvs: &mut dyn KeyValueStore,
        secret: &JobSecret,
        timeout: Duration,
    ) -> io::Result<Signaling> {
        let arrivals = Arc::new(SegQueue::new());
        let sink_queue = arrivals.clone();
        let rail = TcpRail::bind(
            host,
            secret,
            Box::new(move |ep, frame| sink_queue.push((ep, frame))),
        )?;
        let net = Signaling {
            me,
            count,
            rail,
            arrivals,
            links: Mutex::new(Links::default()),
            inbox: SegQueue::new(),
            counters: Counters::default(),
            progressing: Mutex::new(()),
            static_peers: initial_peers(me, count, topology),
            data_sink: std::sync::OnceLock::new(),
            early_data: Mutex::new(Vec::new()),
        };
        let (key, value) = ring_entry(&RingEntry {
            process: me,
            host: host.to_string(),
            port: net.rail.address().port(),
        });
        kvs.put(&key, &value)?;
        kvs.fence()?;
        let peers = net.static_peers.clone();
        for &p in peers.iter().filter(|&&p| p > me) {
            let (key, _) = ring_entry(&RingEntry {
                process: p,
                host: String::new(),
                port: 0,
            });
            let value = kvs.get(&key)?.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("process {p} published no signaling address ({key})"),
                )
            })?;
            let entry = parse_ring_entry(&value).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("malformed signaling address of process {p}: {value:?}"),
                )
            })?;
            let addr = SocketAddr::new(
                entry.host.parse().map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidData, format!("bad host in {value:?}"))
                })?,
                entry.port,
            );
            net.open_link(p, addr)?;
        }
        // The lower-ranked peers connect to us; wait for their hellos, and
        // for the links we opened to finish their handshake (which needs this
        // process to answer, so it cannot be left to a later progress).
        let missing = || -> Vec<u32> {
            let links = net.links.lock().unwrap();
            peers
                .iter()
                .copied()
                .filter(|p| {
                    links
                        .endpoint_of
                        .get(p)
                        .is_none_or(|&ep| !net.rail.is_trusted(ep))
                })
                .collect()
        };
        net.progress_until(
            timeout,
            || missing().is_empty().then_some(()),
            || {
                format!(
                    "process {me}: signaling links from processes {:?} never arrived",
                    missing()
                )
            },
        )?;
        // The topology's links (a fast peer's on-demand link may be up already).
        net.counters
            .static_links
            .store(peers.len() as u64, Ordering::Relaxed);
        Ok(net)
    }

    /// Processes this one has a direct link to, in rank order.
    pub fn connected(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .links
            .lock()
            .unwrap()
            .endpoint_of
            .keys()
            .copied()
            .collect();
        v.sort_unstable();
        v
    }

    /// Whether this process has a direct link to `process`.
    pub fn has_link(&self, process: u32) -> bool {
        self.links
            .lock()
            .unwrap()
            .endpoint_of
            .contains_key(&process)
    }

    /// Where data frames go from now on (those that came earlier go there first).
    pub fn set_data_sink(&self, sink: DataSink) {
        let early = std::mem::take(&mut *self.early_data.lock().unwrap());
        for (from, f) in early {
            sink(from, f, 1);
        }
        if self.data_sink.set(sink).is_err() {
            panic!("the signaling network's data sink is set once");
        }
    }

    /// Sends a data frame, made of `parts`, over the direct link to `to`.
    pub fn send_data(&self, to: u32, parts: &[&[u8]]) -> io::Result<()> {
        let ep = self.links.lock().unwrap().endpoint_of.get(&to).copied();
        let ep = ep.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotConnected,
                format!("process {}: no link to process {to}", self.me),
            )
        })?;
        let mut all = Vec::with_capacity(parts.len() + 1);
        all.push(&[DATA][..]);
        all.extend_from_slice(parts);
        self.rail.send_parts(ep, &all)
    }

    fn open_link(&self, to: u32, addr: SocketAddr) -> io::Result<()> {
        let ep = self.rail.connect(addr)?;
        self.rail.send(ep, &hello(self.me))?;
        let mut links = self.links.lock().unwrap();
        links.process_of.insert(ep, to);
        links.endpoint_of.insert(to, ep);
        Ok(())
    }

    fn forward(&self, mut c: Control) -> io::Result<()> {
        let ep = {
            let links = self.links.lock().unwrap();
            let connected: Vec<u32> = links.endpoint_of.keys().copied().collect();
            let hop = next_hop(self.me, c.dest, &connected).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotConnected,
                    format!("process {}: no route to process {}", self.me, c.dest),
                )
            })?;
            links.endpoint_of[&hop]
        };
        c.hops += 1;
        let mut frame = vec![CONTROL];
        frame.extend_from_slice(&c.encode());
        self.rail.send(ep, &frame)
    }

    /// Sends a control message to process `dest` over the signaling network.
    pub fn send(&self, dest: u32, kind: ControlKind) -> io::Result<()> {
        if dest >= self.count || dest == self.me {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "control message from process {} to process {dest} of {}",
                    self.me, self.count
                ),
            ));
        }
        self.counters.sent.fetch_add(1, Ordering::Relaxed);
        self.forward(Control {
            source: self.me,
            dest,
            hops: 0,
            kind,
        })
    }

    /// One round: moves bytes, registers new links, forwards what passes through
    /// and answers connect requests. Returns whether anything happened.
    pub fn progress(&self) -> io::Result<bool> {
        let Ok(_turn) = self.progressing.try_lock() else {
            return Ok(false);
        };
        let mut moved = self.rail.progress()?;
        while let Some((ep, frame)) = self.arrivals.pop() {
            moved = true;
            if let Some(from) = hello_from(&frame, self.me, self.count) {
                let from = from.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                let mut links = self.links.lock().unwrap();
                links.process_of.insert(ep, from);
                // Two requests that crossed may link a pair twice: the first
                // link carries everything, the second only says hello.
                if !links.endpoint_of.contains_key(&from) {
                    links.endpoint_of.insert(from, ep);
                    if !self.static_peers.contains(&from) {
                        self.counters.ondemand_links.fetch_add(1, Ordering::Relaxed);
                    }
                }
                continue;
            }
            match frame.first() {
                Some(&DATA) => {
                    let from = self.links.lock().unwrap().process_of.get(&ep).copied();
                    let from = from.ok_or_else(|| {
                        io::Error::new(
                            io::ErrorKind::InvalidData,
                            "data frame on a link before its hello",
                        )
                    })?;
                    match self.data_sink.get() {
                        Some(sink) => sink(from, frame, 1),
                        None => self.early_data.lock().unwrap().push((from, frame)),
                    }
                }
                Some(&CONTROL) => {
                    let c = Control::decode(&frame[1..]).ok_or_else(|| {
                        io::Error::new(io::ErrorKind::InvalidData, "malformed control message")
                    })?;
                    if c.dest == self.me {
                        self.deliver(c)?;
                    } else {
                        self.counters.forwarded.fetch_add(1, Ordering::Relaxed);
                        self.forward(c)?;
                    }
                }
                Some(&GOODBYE) if frame.len() == 1 => {
                    self.links.lock().unwrap().departed.insert(ep);
                }
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("unknown signaling frame of {} bytes", frame.len()),
                    ))
                }
            }
        }
        // After the frames: a goodbye comes before its link's end.
        for ended in self.rail.take_ended() {
            moved = true;
            let links = self.links.lock().unwrap();
            let ep = ended.endpoint;
            match links.process_of.get(&ep) {
                // A reset or broken pipe, as much as an end of file.
                Some(&process) if !links.departed.contains(&ep) => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        Vanished { process },
                    ));
                }
                // In order, or a link whose opener never said hello.
                _ => {}
            }
        }
        Ok(moved)
    }

    /// Says goodbye on every link (this process leaves the job in order) and
    /// waits, up to `timeout`, until the rail wrote it out.
    pub fn say_goodbye(&self, timeout: Duration) {
        let endpoints: Vec<usize> = self
            .links
            .lock()
            .unwrap()
            .process_of
            .keys()
            .copied()
            .collect();
        for ep in endpoints {
            // A peer gone already cannot be told.
            let _ = self.rail.send(ep, &[GOODBYE]);
        }
        let deadline = Instant::now() + timeout;
        while self.rail.unsent() && Instant::now() < deadline {
            let _ = self.progress();
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    fn deliver(&self, c: Control) -> io::Result<()> {
        let k = &self.counters;
        k.delivered.fetch_add(1, Ordering::Relaxed);
        k.hops_total.fetch_add(c.hops as u64, Ordering::Relaxed);
        k.hops_max.fetch_max(c.hops as u64, Ordering::Relaxed);
        if let ControlKind::ConnectRequest {
            rail: SIGNALING_RAIL,
            address,
        } = &c.kind
        {
            // The requester waits for our hello on a link we open to it.
            let addr: SocketAddr = address.parse().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "connect request from process {} with address {address:?}",
                        c.source
                    ),
                )
            })?;
            if !self
                .links
                .lock()
                .unwrap()
                .endpoint_of
                .contains_key(&c.source)
            {
                self.open_link(c.source, addr)?;
                k.ondemand_links.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.inbox.push(c);
        Ok(())
    }

    /// Asks `dest` for a direct link without waiting: a connect request travels
    /// over the existing links, and `dest` connects back ([`Signaling::has_link`]
    /// turns true once its hello arrived).
    pub fn request_link(&self, dest: u32) -> io::Result<()> {
        self.send(
            dest,
            ControlKind::ConnectRequest {
                rail: SIGNALING_RAIL,
                address: self.rail.address().to_string(),
            },
        )
    }

    /// Opens a direct link to `dest` ([`Signaling::request_link`]) and returns when
    /// it is up.
    pub fn connect_on_demand(&self, dest: u32, timeout: Duration) -> io::Result<()> {
        if self.has_link(dest) {
            return Ok(());
        }
        self.request_link(dest)?;
        self.progress_until(
            timeout,
            || {
                let linked = self.links.lock().unwrap().endpoint_of.contains_key(&dest);
                linked.then_some(())
            },
            || {
                format!(
                    "process {}: process {dest} never answered a connect request",
                    self.me
                )
            },
        )?;
        Ok(())
    }

    /// The next control message addressed to this process, if one arrived.
    pub fn try_receive(&self) -> Option<Control> {
        // Lock-free: every progress round of the fabric looks here. An empty
        // queue's `pop` runs a full fence; `is_empty` only loads.
        if self.inbox.is_empty() {
            return None;
        }
        self.inbox.pop()
    }

    /// Waits (driving progress) for the next control message.
    pub fn receive(&self, timeout: Duration) -> io::Result<Control> {
        self.progress_until(
            timeout,
            || self.try_receive(),
            || format!("process {}: no control message arrived", self.me),
        )
    }

    /// Drives progress until `done` yields, or fails with `what` after `timeout`.
    /// Sleeps briefly only when a round moved nothing.
    fn progress_until<T>(
        &self,
        timeout: Duration,
        mut done: impl FnMut() -> Option<T>,
        what: impl FnOnce() -> String,
    ) -> io::Result<T> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(v) = done() {
                return Ok(v);
            }
            if !self.progress()? {
                if Instant::now() > deadline {
                    return Err(timed_out(what()));
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    pub fn stats(&self) -> SignalingStats {
        let k = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        SignalingStats {
            static_links: get(&k.static_links),
            ondemand_links: get(&k.ondemand_links),
            sent: get(&k.sent),
            forwarded: get(&k.forwarded),
            delivered: get(&k.delivered),
            hops_total: get(&k.hops_total),
            hops_max: get(&k.hops_max),
            refused: self.rail.refused(),
        }
    }
}

impl mpcrs_scheduler::Progress for Signaling {
    fn poll(&self, _worker: usize) -> bool {
        // A broken link is the job's end; the launcher names the process.
        self.progress().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    /// A key-value store shared by the threads that play a job's processes.
    struct SharedStore {
        entries: Arc<Mutex<HashMap<String, String>>>,
        fence: Arc<Barrier>,
    }

    impl KeyValueStore for SharedStore {
        fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
            self.entries
                .lock()
                .unwrap()
                .insert(key.into(), value.into());
            Ok(())
        }
        fn fence(&mut self) -> io::Result<()> {
            self.fence.wait();
            Ok(())
        }
        fn get(&mut self, key: &str) -> io::Result<Option<String>> {
            Ok(self.entries.lock().unwrap().get(key).cloned())
        }
    }

    /// Two processes linked by the ring.
    fn pair() -> (Signaling, Signaling) {
        let entries = Arc::default();
        let fence = Arc::new(Barrier::new(2));
        let secret = JobSecret::generate().unwrap();
        let start = |me| {
            let mut kvs = SharedStore {
                entries: Arc::clone(&entries),
                fence: Arc::clone(&fence),
            };
            let secret = secret.clone();
            std::thread::spawn(move || {
                Signaling::bootstrap(
                    me,
                    2,
                    "127.0.0.1".parse().unwrap(),
                    StaticTopology::Ring,
                    &mut kvs,
                    &secret,
                    Duration::from_secs(10),
                )
                .unwrap()
            })
        };
        let (a, b) = (start(0), start(1));
        (a.join().unwrap(), b.join().unwrap())
    }

    /// Progress of `net` until it fails or `rounds` rounds passed.
    fn progress_for(net: &Signaling, rounds: usize) -> io::Result<()> {
        for _ in 0..rounds {
            net.progress()?;
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    #[test]
    fn a_process_that_says_goodbye_leaves_in_order() {
        let (a, b) = pair();
        a.say_goodbye(Duration::from_secs(10));
        drop(a);
        progress_for(&b, 300).expect("a goodbye, then the link's end");
    }

    #[test]
    fn a_link_that_ends_without_a_goodbye_is_a_death() {
        let (a, b) = pair();
        b.send(
            0,
            ControlKind::Deadlock {
                round: 1,
                step: 0,
                values: vec![],
            },
        )
        .unwrap();
        drop(a);
        let e = progress_for(&b, 3000).expect_err("the end of a link without a goodbye");
        assert_eq!(Vanished::of(&e), Some(&Vanished { process: 0 }), "{e}");
        assert!(e.to_string().contains("process 0 is gone"), "{e}");
    }
}
