//! The rails of this process as the runtime drives them: one driver per rail of
//! the selected `<cli_option>`, the per-process endpoint lists and their
//! election (mpcrs_rails::election), connections made on demand, and the
//! counters `--net-stats` prints.
//!
//! The ring rail is the signaling network's own tcp links; other tcp rails have
//! listeners of their own, and a connect request (over signaling) makes the peer
//! connect back and say hello; an shm rail's ring is created by the sender and
//! offered to the receiver, which opens one back at once, so that whoever
//! received a frame can always answer on an existing endpoint; an ibverbs rail's
//! queue pairs are connected by exchanging their addresses in connect requests
//! (untested: no RDMA device here).

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpcrs_rails::election::{Election, Routes};
use mpcrs_rails::shm_rail::ShmRail;
use mpcrs_rails::tcp::TcpRail;
use mpcrs_rails::verbs_rail::VerbsPeers;
use mpcrs_rails::{Driver, MessageInfo, MessageKind, RailSet, Topology};
use mpcrs_signaling::{ControlKind, Signaling};

/// How long a connection on demand may take before the job gives up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

use mpcrs_signaling::hello::{hello, hello_from, DATA};

/// An endpoint to one process on one rail.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Conn {
    /// A direct link of the signaling network.
    Ring,
    /// Endpoint id of the rail's tcp driver.
    Tcp(usize),
    /// The ring this process writes to the other.
    Shm,
    /// The queue pair connected to the other (ibverbs).
    Verbs,
}

/// Where a frame goes: a rail of the set and the endpoint on it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Route {
    rail: usize,
    conn: Conn,
}

/// A copy of the routing table for elections, numbered.
struct Published {
    version: u64,
    routes: Routes<Conn>,
}

impl Route {
    /// In one word: rail, driver's endpoint kind, tcp endpoint id.
    fn pack(self) -> u64 {
        let (kind, ep) = match self.conn {
            Conn::Ring => (0, 0),
            Conn::Tcp(ep) => (1, ep as u64),
            Conn::Shm => (2, 0),
            Conn::Verbs => (3, 0),
        };
        (self.rail as u64) << 48 | kind << 40 | (ep & ((1 << 40) - 1))
    }

    fn unpack(w: u64) -> Route {
        let ep = (w & ((1 << 40) - 1)) as usize;
        let conn = match (w >> 40) & 0xff {
            0 => Conn::Ring,
            1 => Conn::Tcp(ep),
            2 => Conn::Shm,
            _ => Conn::Verbs,
        };
        Route {
            rail: (w >> 48) as usize,
            conn,
        }
    }
}

/// The last election of an endpoint towards one process, for the sizes that
/// are elected alike with the table of `version`: a send whose size falls
/// there takes the same endpoint after a few loads. A sequence lock (odd
/// `seq`: being written), since any sender may write it.
#[derive(Default)]
struct LastElected {
    seq: AtomicU64,
    version: AtomicU64,
    sizes: [AtomicU64; 2],
    route: AtomicU64,
}

impl LastElected {
    fn get(&self, version: u64, size: u64) -> Option<Route> {
        let seq = self.seq.load(Ordering::Acquire);
        let found = self.version.load(Ordering::Acquire) == version
            && (self.sizes[0].load(Ordering::Acquire)..=self.sizes[1].load(Ordering::Acquire))
                .contains(&size);
        let route = self.route.load(Ordering::Acquire);
        // Loads are not reordered with each other here (acquire): an unchanged
        // even `seq` means the fields read belong together.
        (found && seq & 1 == 0 && self.seq.load(Ordering::Acquire) == seq)
            .then(|| Route::unpack(route))
    }

    fn set(&self, version: u64, sizes: std::ops::RangeInclusive<u64>, route: Route) {
        let seq = self.seq.load(Ordering::Relaxed);
        if seq & 1 == 1
            || self
                .seq
                .compare_exchange(seq, seq + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return; // another sender is writing it
        }
        self.version.store(version, Ordering::Release);
        self.sizes[0].store(*sizes.start(), Ordering::Release);
        self.sizes[1].store(*sizes.end(), Ordering::Release);
        self.route.store(route.pack(), Ordering::Release);
        self.seq.store(seq + 2, Ordering::Release);
    }
}

/// What an election found: an endpoint, or a rail to create one on.
enum Elected {
    Route(Route),
    Create(usize),
}

/// Endpoints of a tcp rail by process, learnt from hellos.
#[derive(Default)]
struct TcpPeers {
    process_of: HashMap<usize, u32>,
}

enum Instance {
    /// The signaling network's links.
    Ring,
    Tcp {
        rail: TcpRail,
        peers: Arc<Mutex<TcpPeers>>,
    },
    Shm(ShmRail),
    /// Untested: no RDMA device on the machines mpcrs is tested on.
    Verbs(VerbsPeers),
    /// A rail whose driver cannot run here (ibverbs without a device).
    Unavailable(String),
}

/// Counters of one rail for `--net-stats`.
#[derive(Default)]
pub(crate) struct RailCounters {
    pub(crate) static_endpoints: AtomicU64,
    pub(crate) ondemand_endpoints: AtomicU64,
    pub(crate) messages: AtomicU64,
    pub(crate) bytes: AtomicU64,
    /// Sizes of the smallest and the largest frame sent.
    pub(crate) smallest: AtomicU64,
    pub(crate) largest: AtomicU64,
}

impl RailCounters {
    fn new() -> RailCounters {
        RailCounters {
            smallest: AtomicU64::new(u64::MAX),
            ..RailCounters::default()
        }
    }
}

/// Sink of frames that arrived on a rail: (rail index, process, frame, payload
/// offset).
pub(crate) type FrameSink = Arc<dyn Fn(u32, Vec<u8>, usize) + Send + Sync>;

/// Where the rails' frames go: frames of their own (tcp, ibverbs), and frames
/// lent in place (shared-memory rings: handed to the rail as it is, one call
/// per frame).
pub(crate) struct FrameSinks {
    pub(crate) owned: FrameSink,
    pub(crate) lent: fn(u32, &[u8]),
}

pub(crate) struct Links {
    me: u32,
    nodes: Vec<u32>,
    set: RailSet,
    /// The routing table, changed under its lock (seldom: on-demand
    /// connections, a checkpoint closing the high-speed rails).
    routes: Mutex<Routes<Conn>>,
    /// A copy of `routes` made at each change, which elections (every send)
    /// read without a lock. Copies replaced since are kept in `replaced`, an
    /// election may still be reading one, until `close_high_speed` (no send
    /// runs then) or the end.
    elected: AtomicPtr<Published>,
    #[allow(clippy::vec_box)] // an election may still read a copy: it must not move
    replaced: Mutex<Vec<Box<Published>>>,
    /// The last election towards each process, and the sizes it holds for.
    last_elected: Box<[LastElected]>,
    instances: Vec<Instance>,
    /// Whether one of them is shared memory (asked every progress round).
    shared_memory: bool,
    /// Whether every frame from another process rings a bell (asked by every
    /// idle worker; see [`Links::rings_for_everything`]).
    rings_for_everything: bool,
    pub(crate) counters: Vec<RailCounters>,
}

impl Drop for Links {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw`; nobody elects through links being
        // dropped.
        drop(unsafe { Box::from_raw(*self.elected.get_mut()) });
    }
}

/// Asks process `to`, over signaling, to connect on rail `rail` at `address`
/// (or answers such a request).
fn connect_request(signaling: &Signaling, to: u32, rail: usize, address: String) -> io::Result<()> {
    signaling.send(
        to,
        ControlKind::ConnectRequest {
            rail: wire_rail(rail),
            address,
        },
    )
}

fn verbs_error(e: mpcrs_rails::verbs::VerbsError) -> io::Error {
    io::Error::other(e)
}

/// Number of a rail in connect requests (0 is the signaling rail itself).
fn wire_rail(index: usize) -> u16 {
    index as u16 + 1
}

impl Links {
    /// Starts the drivers of `set`. `job` names shared-memory rings; `host` is the
    /// address tcp rails listen on; frames go to `sink`.
    pub(crate) fn new(
        set: RailSet,
        me: u32,
        nodes: Vec<u32>,
        job: &str,
        host: IpAddr,
        secret: &mpcrs_auth::JobSecret,
        sinks: FrameSinks,
    ) -> io::Result<Links> {
        let sink = sinks.owned;
        let mut instances = Vec::new();
        for (index, rail) in set.rails.iter().enumerate() {
            let instance = match rail.driver {
                Driver::Tcp if rail.topology == Topology::Ring => Instance::Ring,
                Driver::Tcp => {
                    let peers: Arc<Mutex<TcpPeers>> = Arc::default();
                    let (p, sink) = (peers.clone(), sink.clone());
                    let processes = nodes.len() as u32;
                    let tcp = TcpRail::bind(
                        host,
                        secret,
                        Box::new(move |ep, frame| match hello_from(&frame, me, processes) {
                            Some(Err(e)) => super::Fabric::expect()
                                .link_protocol_error(format_args!("{e} on tcp rail {index}")),
                            Some(Ok(from)) => {
                                p.lock().unwrap().process_of.insert(ep, from);
                                // The requester learns its endpoint from the hello.
                                super::Fabric::expect().net().links.add_endpoint(
                                    from,
                                    index,
                                    Conn::Tcp(ep),
                                );
                            }
                            None if frame.first() == Some(&DATA) => {
                                let from = p.lock().unwrap().process_of.get(&ep).copied();
                                let Some(from) = from else {
                                    super::Fabric::expect().link_protocol_error(format_args!(
                                        "a data frame before its hello on tcp rail {index}"
                                    ))
                                };
                                sink(from, frame, 1)
                            }
                            None => super::Fabric::expect().link_protocol_error(format_args!(
                                "an unknown {}-byte frame on tcp rail {index}",
                                frame.len()
                            )),
                        }),
                    )?;
                    Instance::Tcp { rail: tcp, peers }
                }
                Driver::Shm => Instance::Shm(ShmRail::new(
                    job,
                    me,
                    nodes.len() as u32,
                    Box::new(sinks.lent),
                )),
                Driver::Ibverbs => {
                    let sink = sink.clone();
                    match VerbsPeers::new(Box::new(move |from, frame| sink(from, frame, 0))) {
                        Ok(peers) => Instance::Verbs(peers),
                        Err(e) => {
                            Instance::Unavailable(format!("rail {} (ibverbs): {e}", rail.name))
                        }
                    }
                }
            };
            instances.push(instance);
        }
        let shared_memory = instances.iter().any(|i| matches!(i, Instance::Shm(_)));
        let rings_for_everything = shared_memory
            && nodes.iter().all(|&n| n == nodes[me as usize])
            && !instances.iter().any(|i| matches!(i, Instance::Verbs(_)));
        Ok(Links {
            me,
            last_elected: nodes.iter().map(|_| LastElected::default()).collect(),
            nodes,
            counters: set.rails.iter().map(|_| RailCounters::new()).collect(),
            routes: Mutex::new(Routes::new(set.clone())),
            elected: AtomicPtr::new(Box::into_raw(Box::new(Published {
                version: 0,
                routes: Routes::new(set.clone()),
            }))),
            replaced: Mutex::new(Vec::new()),
            set,
            shared_memory,
            rings_for_everything,
            instances,
        })
    }

    pub(crate) fn rails(&self) -> &RailSet {
        &self.set
    }

    /// Whether the rails include shared memory (which copies large messages
    /// straight between processes of a node).
    pub(crate) fn has_shared_memory(&self) -> bool {
        self.shared_memory
    }

    /// Index of the ring rail (the signaling network's), if the set has one.
    pub(crate) fn ring_rail(&self) -> Option<usize> {
        self.instances
            .iter()
            .position(|i| matches!(i, Instance::Ring))
    }

    /// Changes the routing table with `f`, under its lock, and publishes a copy
    /// for elections.
    fn edit_routes<R>(&self, f: impl FnOnce(&mut Routes<Conn>) -> R) -> R {
        let mut routes = self.routes.lock().unwrap();
        let r = f(&mut routes);
        let version = self.routes_now().version + 1;
        let copy = Box::into_raw(Box::new(Published {
            version,
            routes: routes.clone(),
        }));
        let old = self.elected.swap(copy, Ordering::AcqRel);
        // SAFETY: made by `Box::into_raw` (here or in `new`), unpublished just
        // now; kept, not freed: an election may still be reading it.
        self.replaced
            .lock()
            .unwrap()
            .push(unsafe { Box::from_raw(old) });
        r
    }

    /// The routing table as elections read it.
    fn routes_now(&self) -> &Published {
        // SAFETY: published copies are freed only by `close_high_speed`, when no
        // send runs (the checkpoint holds the send gate), or with the links.
        unsafe { &*self.elected.load(Ordering::Acquire) }
    }

    /// Records the start-up links of the signaling network as ring endpoints.
    pub(crate) fn add_static(&self, processes: &[u32]) {
        if let Some(ring) = self.ring_rail() {
            self.edit_routes(|routes| {
                for &p in processes {
                    routes.add(p, ring, Conn::Ring);
                    self.counters[ring]
                        .static_endpoints
                        .fetch_add(1, Ordering::Relaxed);
                }
            })
        }
    }

    fn add_endpoint(&self, process: u32, rail: usize, conn: Conn) {
        self.edit_routes(|routes| {
            if routes.endpoints(process).iter().any(|e| e.rail == rail) {
                return;
            }
            routes.add(process, rail, conn);
            self.counters[rail]
                .ondemand_endpoints
                .fetch_add(1, Ordering::Relaxed);
        })
    }

    fn reachable(&self, process: u32, rail: usize) -> bool {
        match &self.instances[rail] {
            Instance::Shm(_) => self.nodes[process as usize] == self.nodes[self.me as usize],
            Instance::Unavailable(_) => false,
            Instance::Ring | Instance::Tcp { .. } | Instance::Verbs(_) => true,
        }
    }

    /// The endpoint elected for a `size`-byte message to `process`, or the rail
    /// to create one on: the last election's endpoint if it holds for this size
    /// and the table is unchanged, else one look at the table.
    fn elect(&self, process: u32, size: usize) -> Result<Elected, io::Error> {
        let info = MessageInfo {
            size: size as u64,
            kind: MessageKind::Process,
        };
        let table = self.routes_now();
        let last = &self.last_elected[process as usize];
        if let Some(route) = last.get(table.version, info.size) {
            return Ok(Elected::Route(route));
        }
        let routes = &table.routes;
        routes
            .elect_alike(process, &info, |index, _| self.reachable(process, index))
            .map(|(e, alike)| match e {
                Election::Existing(i) => {
                    let e = &routes.endpoints(process)[i];
                    let route = Route {
                        rail: e.rail,
                        conn: e.conn,
                    };
                    if let Some(sizes) = alike {
                        last.set(table.version, sizes, route);
                    }
                    Elected::Route(route)
                }
                Election::Create(rail) => Elected::Create(rail),
            })
            .map_err(|e| {
                let why: Vec<String> = self
                    .instances
                    .iter()
                    .filter_map(|i| match i {
                        Instance::Unavailable(w) => Some(w.clone()),
                        _ => None,
                    })
                    .collect();
                let mut msg = e.to_string();
                if !why.is_empty() {
                    msg.push_str(&format!(" ({})", why.join("; ")));
                }
                io::Error::new(io::ErrorKind::NotConnected, msg)
            })
    }

    /// The endpoint elected for a `size`-byte message to `process`, connecting on
    /// demand. Called by ranks (it may wait, driving `progress`, for the other
    /// side).
    pub(crate) fn ensure(
        &self,
        process: u32,
        size: usize,
        signaling: &Signaling,
        progress: &dyn Fn(),
    ) -> io::Result<Route> {
        loop {
            let rail = match self.elect(process, size)? {
                Elected::Route(r) => return Ok(r),
                Elected::Create(rail) => rail,
            };
            self.connect(process, rail, signaling, progress)?;
        }
    }

    /// The endpoint elected for a `size`-byte message to `process`, or, when that
    /// rail has no endpoint yet, the best one that exists: for callers that cannot
    /// wait (answers from progress).
    pub(crate) fn route_now(&self, process: u32, size: usize) -> io::Result<Route> {
        if let Ok(Elected::Route(r)) = self.elect(process, size) {
            return Ok(r);
        }
        let e = self
            .routes_now()
            .routes
            .endpoints(process)
            .first()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotConnected,
                    format!("process {}: no endpoint to process {process}", self.me),
                )
            })?;
        Ok(Route {
            rail: e.rail,
            conn: e.conn,
        })
    }

    fn connect(
        &self,
        process: u32,
        rail: usize,
        signaling: &Signaling,
        progress: &dyn Fn(),
    ) -> io::Result<()> {
        let name = &self.set.rails[rail].name;
        let has = || {
            self.routes_now()
                .routes
                .endpoints(process)
                .iter()
                .any(|e| e.rail == rail)
        };
        match &self.instances[rail] {
            Instance::Ring => {
                if !signaling.has_link(process) {
                    signaling.request_link(process)?;
                    wait(
                        progress,
                        || signaling.has_link(process),
                        || format!("process {process} never linked back on rail {name}"),
                    )?;
                }
                self.add_endpoint(process, rail, Conn::Ring);
            }
            Instance::Tcp { rail: tcp, .. } => {
                connect_request(signaling, process, rail, tcp.address().to_string())?;
                wait(progress, has, || {
                    format!("process {process} never connected back on rail {name}")
                })?;
            }
            Instance::Shm(shm) => {
                self.offer_shm(process, rail, shm, signaling)?;
            }
            Instance::Verbs(verbs) => {
                if let Some(address) = verbs.offer(process).map_err(verbs_error)? {
                    connect_request(signaling, process, rail, address)?;
                }
                wait(
                    progress,
                    || verbs.is_connected(process),
                    || format!("process {process} never answered on rail {name}"),
                )?;
                self.add_endpoint(process, rail, Conn::Verbs);
            }
            Instance::Unavailable(why) => {
                return Err(io::Error::new(io::ErrorKind::NotConnected, why.clone()))
            }
        }
        Ok(())
    }

    fn offer_shm(
        &self,
        process: u32,
        rail: usize,
        shm: &ShmRail,
        signaling: &Signaling,
    ) -> io::Result<()> {
        self.edit_routes(|routes| {
            if routes.endpoints(process).iter().any(|e| e.rail == rail) {
                return Ok(());
            }
            let name = shm.create_outgoing(process)?;
            connect_request(signaling, process, rail, name)?;
            // The ring exists: frames may be queued before the other side opens it.
            routes.add(process, rail, Conn::Shm);
            self.counters[rail]
                .ondemand_endpoints
                .fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
    }

    /// Answers a connect request of `from` for rail `wire` (from any thread: it
    /// does not wait for the other side).
    pub(crate) fn accept(
        &self,
        from: u32,
        wire: u16,
        address: &str,
        signaling: &Signaling,
    ) -> io::Result<()> {
        let rail = (wire as usize)
            .checked_sub(1)
            .filter(|&r| r < self.instances.len());
        let Some(rail) = rail else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("process {from} asked to connect on unknown rail {wire}"),
            ));
        };
        match &self.instances[rail] {
            Instance::Tcp { rail: tcp, peers } => {
                let addr = address.parse().map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("process {from} sent the tcp address {address:?}"),
                    )
                })?;
                // The hello goes first: nothing of ours may precede it on the
                // connection. The other side sends only once it has the hello,
                // a round trip after the endpoint is ours.
                let ep = tcp.connect(addr)?;
                peers.lock().unwrap().process_of.insert(ep, from);
                tcp.send(ep, &hello(self.me))?;
                self.add_endpoint(from, rail, Conn::Tcp(ep));
            }
            Instance::Shm(shm) => {
                // Our ring back before theirs is read: frames may wait in theirs
                // already, and one may want an answer (a FIN, a CTS) at once,
                // from a progress round that cannot wait for a connection.
                self.offer_shm(from, rail, shm, signaling)?;
                shm.accept_incoming(from, address)?;
            }
            Instance::Verbs(verbs) => {
                // Our address goes back unless this answers our own request.
                if let Some(address) = verbs.accept(from, address).map_err(verbs_error)? {
                    connect_request(signaling, from, rail, address)?;
                }
                self.add_endpoint(from, rail, Conn::Verbs);
            }
            Instance::Ring | Instance::Unavailable(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "process {from} asked to connect on rail {}",
                        self.set.rails[rail].name
                    ),
                ))
            }
        }
        Ok(())
    }

    /// Sends a frame made of `parts` to `process` on `route` (from
    /// [`Links::ensure`] or [`Links::route_now`]; endpoints are never removed).
    pub(crate) fn send(
        &self,
        process: u32,
        route: Route,
        parts: &[&[u8]],
        signaling: &Signaling,
    ) -> io::Result<()> {
        let size: usize = parts.iter().map(|p| p.len()).sum();
        // Counted before the frame goes: a locked instruction right after its
        // stores to shared memory would wait for them to reach the other core.
        let k = &self.counters[route.rail];
        k.messages.fetch_add(1, Ordering::Relaxed);
        k.bytes.fetch_add(size as u64, Ordering::Relaxed);
        // Read first: after the first frames, sizes seldom set a new bound, and a
        // fetch_min/max is a locked instruction on every send.
        if (size as u64) < k.smallest.load(Ordering::Relaxed) {
            k.smallest.fetch_min(size as u64, Ordering::Relaxed);
        }
        if (size as u64) > k.largest.load(Ordering::Relaxed) {
            k.largest.fetch_max(size as u64, Ordering::Relaxed);
        }
        match (route.conn, &self.instances[route.rail]) {
            (Conn::Ring, _) => signaling.send_data(process, parts)?,
            (Conn::Tcp(ep), Instance::Tcp { rail: tcp, .. }) => {
                let mut all = Vec::with_capacity(parts.len() + 1);
                all.push(&[DATA][..]);
                all.extend_from_slice(parts);
                tcp.send_parts(ep, &all)?
            }
            (Conn::Shm, Instance::Shm(shm)) => shm.send_parts(process, parts)?,
            (Conn::Verbs, Instance::Verbs(verbs)) => {
                verbs.send_parts(process, parts).map_err(verbs_error)?
            }
            _ => unreachable!("endpoint of another driver on rail {}", route.rail),
        }
        Ok(())
    }

    /// Removes every shared-memory and ibverbs endpoint and closes its rings
    /// and queue pairs (a checkpoint: images hold no shared memory or device
    /// state); they are made again on demand. Returns how many were closed.
    /// Removes the names of this process's shared-memory rings still in
    /// /dev/shm (see `ShmRail::unlink_names`): the job is ending.
    pub(crate) fn unlink_ring_names(&self) {
        for i in &self.instances {
            if let Instance::Shm(s) = i {
                s.unlink_names();
            }
        }
    }

    pub(crate) fn close_high_speed(&self) -> usize {
        self.edit_routes(|routes| {
            routes.remove_rails(|r| matches!(r.driver, Driver::Shm | Driver::Ibverbs))
        });
        // No send runs now: the copies elections read before are free.
        self.replaced.lock().unwrap().clear();
        self.instances
            .iter()
            .map(|i| match i {
                Instance::Shm(s) => s.close_all(),
                Instance::Verbs(v) => v.close_all(),
                _ => 0,
            })
            .sum()
    }

    /// Largest frame every rail carries (rendezvous data is cut to this).
    pub(crate) fn max_frame(&self) -> usize {
        self.instances
            .iter()
            .filter_map(|i| match i {
                Instance::Shm(s) => Some(s.max_frame()),
                _ => None,
            })
            .min()
            .unwrap_or(1 << 20)
    }

    /// Arms the shared-memory rail's bells for one sleep of a worker (see
    /// mpcrs_scheduler::bell).
    pub(crate) fn arm(&self) -> Option<Box<dyn mpcrs_scheduler::bell::Armed>> {
        self.instances.iter().find_map(|i| match i {
            Instance::Shm(s) => s
                .arm()
                .map(|a| Box::new(a) as Box<dyn mpcrs_scheduler::bell::Armed>),
            _ => None,
        })
    }

    /// Whether every frame from another process rings a bell: the job's
    /// processes are all on this node, reached over shared memory (and no
    /// RDMA device is polled). Control messages over the signaling network
    /// (connection requests, checkpoint steps) still wait for a worker's
    /// timed poll, at most a millisecond.
    pub(crate) fn rings_for_everything(&self) -> bool {
        self.rings_for_everything
    }

    /// Connections the tcp rails accepted and closed: their peers did not
    /// prove they belong to the job.
    pub(crate) fn refused_connections(&self) -> u64 {
        self.instances
            .iter()
            .map(|i| match i {
                Instance::Tcp { rail, .. } => rail.refused(),
                _ => 0,
            })
            .sum()
    }

    /// Progress of the tcp rails (a system call each); whether anything moved.
    pub(crate) fn progress_sockets(&self) -> io::Result<bool> {
        let mut moved = false;
        for i in &self.instances {
            if let Instance::Tcp { rail, .. } = i {
                moved |= rail.progress()?;
                // A peer's orderly close says nothing here (the signaling
                // network tells a death from a departure); a broken one fails
                // the round, once its frames are delivered.
                for ended in rail.take_ended() {
                    if let Some(e) = ended.broken {
                        return Err(e);
                    }
                }
            }
        }
        Ok(moved)
    }

    /// Progress of the rails polled by looking at memory (shared-memory rings,
    /// RDMA completion queues); whether frames arrived.
    pub(crate) fn progress_memory_rails(&self) -> io::Result<bool> {
        let mut moved = false;
        for i in &self.instances {
            moved |= match i {
                Instance::Shm(s) => s.progress(),
                Instance::Verbs(v) => v.progress().map_err(verbs_error)?,
                _ => false,
            };
        }
        Ok(moved)
    }
}

/// Drives `progress` (yielding to the other ranks) until `done`, or fails after
/// [`CONNECT_TIMEOUT`] with `what`.
fn wait(
    progress: &dyn Fn(),
    done: impl Fn() -> bool,
    what: impl FnOnce() -> String,
) -> io::Result<()> {
    let deadline = Instant::now() + CONNECT_TIMEOUT;
    while !done() {
        if Instant::now() > deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, what()));
        }
        progress();
        mpcrs_scheduler::yield_now();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_pack_into_a_word_and_back() {
        for conn in [
            Conn::Ring,
            Conn::Tcp(0),
            Conn::Tcp(77_000),
            Conn::Shm,
            Conn::Verbs,
        ] {
            let r = Route { rail: 3, conn };
            let back = Route::unpack(r.pack());
            assert_eq!(back.rail, 3);
            assert_eq!(format!("{:?}", back.conn), format!("{conn:?}"));
        }
    }

    #[test]
    fn a_last_election_holds_for_its_sizes_and_table_only() {
        let last = LastElected::default();
        assert!(last.get(0, 8).is_none(), "nothing elected yet");
        let tcp = Route {
            rail: 1,
            conn: Conn::Tcp(5),
        };
        last.set(4, 0..=1024, tcp);
        assert!(matches!(
            last.get(4, 8),
            Some(Route {
                rail: 1,
                conn: Conn::Tcp(5)
            })
        ));
        assert!(last.get(4, 1024).is_some());
        assert!(last.get(4, 1025).is_none(), "another size span");
        assert!(last.get(5, 8).is_none(), "the table changed since");
        // A writer in the middle of its update: readers look elsewhere.
        last.seq.fetch_add(1, Ordering::AcqRel);
        assert!(last.get(4, 8).is_none());
        last.set(
            4,
            0..=8,
            Route {
                rail: 0,
                conn: Conn::Shm,
            },
        );
        last.seq.fetch_add(1, Ordering::AcqRel);
        assert!(
            matches!(last.get(4, 8), Some(Route { rail: 1, .. })),
            "left to the writer"
        );
    }
}
