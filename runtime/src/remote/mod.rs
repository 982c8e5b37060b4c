//! MPI messages between the processes of a job: the process's fabric (the
//! signaling network, the rails of the selected configuration, the registry of
//! communicators spanning processes) and the send side of the protocol.
//!
//! Small standard sends go eagerly in one frame; larger or synchronous ones send
//! a ready-to-send notice and complete when the receiver has the data (see
//! [`deliver`]). Every frame to a process carries a sequence number, so MPI's
//! order holds even when consecutive frames take different rails.
//!
//! Answers produced while frames are being delivered (CTS, FIN, rendezvous data)
//! are deferred and sent by the next progress round outside the drivers' delivery
//! locks: a driver whose queue is full drains its own input while it waits, which
//! must not re-enter a delivery in progress.

mod deliver;
mod gate;
mod launcher;
mod links;
mod machine;
mod pace;
mod quiesce;
mod runs;
mod wire;

use std::io;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crossbeam::queue::SegQueue;
use mpcrs_rails::{NetConfig, Topology};
use mpcrs_signaling::{Control, ControlKind, Signaling, StaticTopology};

use deliver::FrameBuf;
use deliver::Reorder;
pub(crate) use deliver::{
    Arrival, Endpoint, Finish, Incoming, InlineReceiver, PendingSend, Registry,
};
use links::Links;
use wire::{Header, Kind};

use crate::config::JobConfig;
use crate::message::{Outgoing, SendMode, EAGER_LIMIT};
use crate::request::{Completion, Pending, Status};
use mpcrs_pmi as pmi2;
use mpcrs_settings::variables as env;

/// How long start-up may wait for the other processes.
const BOOTSTRAP_TIMEOUT: Duration = Duration::from_secs(60);

/// A reply or rendezvous data to send from the next progress round.
pub(crate) enum Deferred {
    Frame {
        to: u32,
        header: Header,
    },
    Data {
        to: u32,
        token: u64,
        buf: *const u8,
        len: usize,
        done: Arc<Completion>,
    },
}

// SAFETY: `buf` is the buffer of a send in flight, valid and unmodified until
// `done` completes (PendingSend contract).
unsafe impl Send for Deferred {}

/// What connects this process to the others in one run of the job: made at
/// start-up, and made again by a process restored from a checkpoint (sockets and
/// shared memory are not in images; the addresses, the launcher and even the
/// hosts may have changed).
pub(crate) struct Net {
    pub(crate) signaling: Signaling,
    pub(crate) links: Links,
    /// This process's id (cross-memory copies name it) and node.
    pid: u32,
    node: u32,
    /// The node of every process, and the job's name (shared-memory names).
    nodes: Vec<u32>,
    job: String,
    kvs: Mutex<Option<pmi2::Client<pmi2::PmiStream>>>,
}

/// The network of this process in a multi-process job.
pub(crate) struct Fabric {
    pub(crate) me: u32,
    /// World ranks of each process.
    blocks: Vec<std::ops::Range<usize>>,
    /// This run's network. Never freed: a restored process replaces it, and
    /// threads may still hold the old one (a pointer load per use, where a
    /// counted reference cost two atomic read-modify-writes per progress round).
    net: AtomicPtr<Net>,
    /// Runs of the job this process has been part of (1 + restarts): a
    /// rendezvous notice from an earlier run names a process that is gone.
    pub(crate) generation: AtomicU64,
    pub(crate) registry: Registry,
    next_seq: Box<[AtomicU64]>,
    inbound: Box<[Mutex<Reorder>]>,
    deferred: SegQueue<Deferred>,
    sends: Mutex<std::collections::HashMap<u64, PendingSend>>,
    recvs: Mutex<std::collections::HashMap<u64, deliver::PendingRecv>>,
    next_id: AtomicU64,
    max_data: usize,
    cross_memory_bytes: AtomicU64,
    socket_pace: pace::SocketPace,
    /// Control messages (other than checkpoint coordination) acted upon.
    control_handled: AtomicU64,
    /// Frames from other processes acted upon (for the deadlock check: a
    /// frame still being handled is not counted yet).
    frames_handled: AtomicU64,
    /// Checkpoint coordination messages sent, and those received, not yet taken.
    checkpoint_sent: AtomicU64,
    checkpoint_inbox: Mutex<Vec<Control>>,
    /// Told of every coordination message as it arrives (its sequence and
    /// step): the checkpoint protocol wakes its request thread on a start.
    on_checkpoint_message: fn(u64, u8),
    /// The job takes checkpoints: see [`Fabric::node_area_name`].
    checkpoints: bool,
    /// Progress rounds pass it: closed while a checkpoint is taken or the
    /// network is replaced, and for good once a finishing process found a peer
    /// gone.
    progress_gate: gate::Gate,
    /// Outgoing frames pass it: closed while a checkpoint holds them.
    send_gate: gate::Gate,
    /// Frames window agents send pass it instead: a process waiting in
    /// `MPIX_Checkpoint` for the others still answers the ranks those wait
    /// for; closed once every process holds its ranks (checkpoint/across.rs).
    agent_gate: gate::Gate,
    /// Set when this process's ranks have all finalized.
    finishing: AtomicBool,
    /// Whether this process ends the job when another dies (its link closed
    /// without a goodbye): under another launcher (srun), which may let the
    /// others run on. mpcrs-run sees the death itself, ends the job and
    /// names the cause; the others then leave the report to it.
    ends_job_on_death: bool,
    /// The workers the network's progress runs on.
    sched: mpcrs_scheduler::Handle,
}

static FABRIC: OnceLock<Fabric> = OnceLock::new();

/// Where the deadlock check's messages go: (process, round, step, values).
static DEADLOCK_MESSAGES: OnceLock<fn(u32, u64, u8, &[u64])> = OnceLock::new();

/// Hands the deadlock check's messages to `handle` (set once, before ranks run).
pub(crate) fn on_deadlock_messages(handle: fn(u32, u64, u8, &[u64])) {
    let _ = DEADLOCK_MESSAGES.set(handle);
}

/// The node (host) this process runs on in this run of the job, as the
/// launcher numbered the job's hosts; 0 in a job of one process.
pub fn this_node() -> u32 {
    FABRIC.get().map_or(0, |f| f.net().node)
}

/// Polls the fabric from the scheduler's workers.
struct Hook;

impl mpcrs_scheduler::Progress for Hook {
    fn poll(&self, worker: usize) -> bool {
        FABRIC.get().is_some_and(|f| {
            if worker == mpcrs_scheduler::FOREIGN_THREAD {
                f.progress()
            } else {
                f.progress_as(worker)
            }
        })
    }

    fn arm(&self) -> Option<Box<dyn mpcrs_scheduler::bell::Armed>> {
        let f = FABRIC.get()?;
        // Held still around a snapshot: nothing to wake for (and the rings
        // are being closed).
        if f.progress_gate.is_closed() {
            return None;
        }
        f.net().links.arm()
    }

    fn rings_for_everything(&self) -> bool {
        FABRIC
            .get()
            .is_some_and(|f| f.net().links.rings_for_everything())
    }
}

/// How a process joins the job's network: from its environment at start-up, from
/// the environment handed over by the restorer after a restart.
pub(crate) struct Joining<'a> {
    pub(crate) cfg: &'a JobConfig,
    pub(crate) var: &'a dyn Fn(&str) -> Option<String>,
    /// The workers of this process: they yield when idle if other
    /// processes' workers share their CPUs (see [`machine`]).
    pub(crate) sched: &'a mpcrs_scheduler::Handle,
}

/// Where every rail's frames go.
fn frame_sink(from: u32, frame: Vec<u8>, at: usize) {
    Fabric::expect().on_frame(from, FrameBuf::Owned(frame, at))
}

/// Where the shared-memory rings' frames go, lent in place.
fn lent_frame_sink(from: u32, frame: &[u8]) {
    Fabric::expect().on_frame(from, FrameBuf::Lent(frame))
}

impl Net {
    /// Frames on the signaling links go to the fabric from now on (those that
    /// came during the bootstrap first): once the fabric exists.
    fn open_data_path(&self) {
        self.signaling.set_data_sink(Box::new(frame_sink));
    }

    /// PMI-2 client, signaling ring, rails of `MPCRS_NET` from `MPCRS_NET_CONFIG`.
    fn join(j: &Joining) -> Result<Net, String> {
        let cfg = j.cfg;
        let mut kvs = match pmi2::Client::from_variables(j.var) {
            Some(Ok(c)) => c,
            Some(Err(e)) => return Err(format!("cannot reach the job's key-value store: {e}")),
            None => {
                return Err(format!(
                    "{}={} but neither PMI_FD nor PMI_PORT is set: start the job with mpcrs-run -p",
                    env::PROCESSES.name,
                    cfg.processes
                ))
            }
        };
        let (me, count) = (kvs.rank as u32, kvs.size as u32);
        if count as usize != cfg.processes || me as usize != cfg.process {
            return Err(format!(
                "the key-value store says process {me} of {count}, the environment {} of {}",
                cfg.process, cfg.processes
            ));
        }
        // Under another launcher (srun), the installed configuration.
        let config = match (j.var)(env::NET_CONFIG.name) {
            Some(p) => std::path::PathBuf::from(p),
            None => mpcrs_rails::default_config_path(),
        };
        let option = (j.var)(env::NET.name).unwrap_or_else(|| mpcrs_rails::DEFAULT_OPTION.into());
        let set = NetConfig::load(&config)
            .and_then(|c| c.select(&option))
            .map_err(|e| e.to_string())?;
        let topology = match set
            .rails
            .iter()
            .find(|r| r.driver == mpcrs_rails::Driver::Tcp)
        {
            Some(r) if r.topology == Topology::Ring => StaticTopology::Ring,
            Some(r) if r.topology == Topology::Fully => StaticTopology::Fully,
            _ => StaticTopology::Ring,
        };
        // mpcrs-run gives the layout and the address; another launcher does not.
        let learning = cfg.foreign_launcher;
        let host = kvs
            .reachable_address()
            .or_else(|| {
                learning
                    .then(|| launcher::address_toward_launcher(j.var))
                    .flatten()
            })
            .unwrap_or_else(|| "127.0.0.1".parse().unwrap());
        let job = kvs.job_id().map_err(|e| e.to_string())?;
        // Noted before the bootstrap's fence, read after it.
        let machine = machine::Notes::of_job(&job);
        let mine = machine::Note::of_this_process(me, j.sched.workers());
        let noted = machine.add(&mine);
        let secret = mpcrs_signaling::job_secret(j.var, me, &mut kvs)
            .map_err(|e| format!("the job's secret: {e}"))?;
        let signaling = Signaling::bootstrap(
            me,
            count,
            host,
            topology,
            &mut kvs,
            &secret,
            BOOTSTRAP_TIMEOUT,
        )
        .map_err(|e| format!("signaling network: {e}"))?;
        match noted.and_then(|()| machine.read()) {
            Ok(notes) => {
                // The job's settings win.
                if machine::cpus_oversubscribed(&mine, &notes)
                    && cfg.yield_when_idle.is_none()
                    && !j.sched.yields_when_idle()
                {
                    tracing::debug!(
                        "other processes' workers share this process's CPUs: yielding when idle"
                    );
                    j.sched.set_yield_when_idle(true);
                }
            }
            Err(e) => tracing::debug!("cannot tell which processes share this machine: {e}"),
        }
        let nodes = if learning {
            let layout = launcher::learn_layout(&mut kvs, me, count, j.var)
                .map_err(|e| format!("where the job's processes run: {e}"))?;
            // Every process read the notes before this fence of the
            // layout's: gone now, no crash leaves them behind (another
            // launcher does not clean up after the job, as mpcrs-run does).
            machine.remove();
            let nodes = layout.nodes.clone();
            crate::config::set_learned_layout(layout);
            nodes
        } else {
            cfg.nodes.clone()
        };
        let sinks = links::FrameSinks {
            owned: Arc::new(frame_sink),
            lent: lent_frame_sink,
        };
        let links = Links::new(set, me, nodes.clone(), &job, host, &secret, sinks)
            .map_err(|e| format!("rails: {e}"))?;
        // The topology's links, not whatever is connected by now: a fast peer's
        // on-demand link may already be up.
        links.add_static(&mpcrs_signaling::initial_peers(me, count, topology));
        Ok(Net {
            signaling,
            links,
            pid: std::process::id(),
            node: nodes[me as usize],
            nodes,
            job,
            kvs: Mutex::new(Some(kvs)),
        })
    }
}

impl Fabric {
    /// The fabric, once a multi-process job started it.
    pub(crate) fn get() -> Option<&'static Fabric> {
        FABRIC.get()
    }

    pub(crate) fn expect() -> &'static Fabric {
        FABRIC.get().expect("the fabric of a multi-process job")
    }

    /// Joins the job: PMI-2 client, signaling ring, rails of `MPCRS_NET` from
    /// `MPCRS_NET_CONFIG`. Progress is then driven by `sched`'s workers.
    pub(crate) fn start(
        cfg: &JobConfig,
        sched: &mpcrs_scheduler::Handle,
        on_checkpoint_message: fn(u64, u8),
    ) -> Result<&'static Fabric, String> {
        let var = |k: &str| std::env::var(k).ok();
        let net = Net::join(&Joining {
            cfg,
            var: &var,
            sched,
        })?;
        let count = cfg.processes as u32;
        let max_data = net.links.max_frame() / 2;
        let fabric = Fabric {
            me: cfg.process as u32,
            blocks: cfg.blocks(),
            net: AtomicPtr::new(Box::into_raw(Box::new(net))),
            generation: AtomicU64::new(cfg.run),
            registry: Registry::default(),
            next_seq: (0..count).map(|_| AtomicU64::new(0)).collect(),
            inbound: (0..count).map(|_| Mutex::default()).collect(),
            deferred: SegQueue::new(),
            sends: Mutex::default(),
            recvs: Mutex::default(),
            next_id: AtomicU64::new(1),
            max_data,
            cross_memory_bytes: AtomicU64::new(0),
            socket_pace: pace::SocketPace::default(),
            control_handled: AtomicU64::new(0),
            frames_handled: AtomicU64::new(0),
            checkpoint_sent: AtomicU64::new(0),
            checkpoint_inbox: Mutex::new(Vec::new()),
            on_checkpoint_message,
            checkpoints: cfg.checkpoints,
            progress_gate: gate::Gate::with_workers(sched.workers()),
            send_gate: gate::Gate::with_workers(sched.workers()),
            agent_gate: gate::Gate::with_workers(sched.workers()),
            finishing: AtomicBool::new(false),
            ends_job_on_death: cfg.foreign_launcher,
            sched: sched.clone(),
        };
        if FABRIC.set(fabric).is_err() {
            return Err("a process joins one multi-process job only".into());
        }
        let fabric = Fabric::expect();
        if cfg.foreign_launcher {
            crate::process::on_abort_tell_launcher(Fabric::tell_launcher_abort);
        }
        fabric.net().open_data_path();
        sched.add_progress_hook(Arc::new(Hook));
        tracing::debug!(
            processes = count,
            rails = ?fabric.net().links.rails().rails.iter().map(|r| &r.name).collect::<Vec<_>>(),
            "joined the job's network"
        );
        Ok(fabric)
    }

    /// This run's network.
    pub(crate) fn net(&self) -> &'static Net {
        // SAFETY: every Net stored here is leaked (`Box::into_raw`, never
        // freed), so the pointer is valid for the rest of the process.
        unsafe { &*self.net.load(Ordering::Acquire) }
    }

    /// Makes `net` this process's network from now on (a restored process
    /// joining the new run). The previous one stays allocated: see `net`.
    fn replace_net(&self, net: Net) {
        self.net
            .store(Box::into_raw(Box::new(net)), Ordering::Release);
    }

    /// Name of the shared-memory area of the collectives of communicator
    /// `context` among `processes`, where they all run on this node, with a
    /// shared-memory rail among the rails, in a job without checkpoints (so in
    /// its one and only run): a snapshot may stop a rank in the middle of a
    /// round of the area, whose other half (the other processes' slots) is in
    /// no image.
    pub(crate) fn node_area_name(
        &self,
        context: u64,
        mut processes: impl Iterator<Item = u32>,
    ) -> Option<String> {
        let net = self.net();
        let here = net.node;
        (!self.checkpoints
            && net.links.has_shared_memory()
            && processes.all(|p| net.nodes[p as usize] == here))
        .then(|| format!("mpcrs-{}-coll-{context:x}", net.job))
    }

    /// The first world rank of every process.
    pub(crate) fn first_ranks(&self) -> impl Iterator<Item = usize> + '_ {
        self.blocks.iter().map(|b| b.start)
    }

    /// Process of world rank `rank`.
    pub(crate) fn process_of(&self, rank: usize) -> u32 {
        self.blocks
            .iter()
            .position(|b| b.contains(&rank))
            .expect("rank of the job") as u32
    }

    fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn defer(&self, d: Deferred) {
        self.deferred.push(d);
    }

    /// Sends `header` (given its sequence number here) and `payload` to `to`.
    /// `route` is the endpoint chosen by the caller, or `None` to take the elected
    /// one if it exists (answers from progress, which cannot wait to connect).
    fn post(
        &self,
        to: u32,
        route: Option<links::Route>,
        mut header: Header,
        payload: &[u8],
    ) -> io::Result<()> {
        let net = self.net();
        let route = match route {
            Some(r) => r,
            None => net
                .links
                .route_now(to, wire::HEADER_BYTES + payload.len())?,
        };
        // Counted as sent from here: a checkpoint's drain waits until the
        // receiver counts it too.
        header.seq = self.next_seq[to as usize].fetch_add(1, Ordering::AcqRel);
        let (head, n) = header.encode();
        net.links
            .send(to, route, &[&head[..n], payload], &net.signaling)
    }

    /// Starts the send of `msg` to rank `dest` (in process `to`) of the
    /// communicator `context`. Called by ranks.
    ///
    /// # Safety
    /// `msg.buf` valid and unmodified for `msg.len` bytes until the returned
    /// operation finishes.
    pub(crate) unsafe fn send(&self, to: u32, context: u64, dest: i32, msg: Outgoing) -> Pending {
        let Outgoing {
            source,
            tag,
            buf,
            len,
            mode,
        } = msg;
        // While a checkpoint holds the network the rank waits here, inside its
        // MPI call.
        let gate = if crate::process::is_agent() {
            &self.agent_gate
        } else {
            &self.send_gate
        };
        let _pass = loop {
            match gate.try_enter_here() {
                Some(p) => break p,
                None => mpcrs_scheduler::yield_now(),
            }
        };
        let eager = len <= EAGER_LIMIT;
        let progress = || {
            self.progress();
        };
        let net = self.net();
        let ensure = |size: usize| {
            net.links
                .ensure(to, wire::HEADER_BYTES + size, &net.signaling, &progress)
                .unwrap_or_else(|e| self.fail(e))
        };
        if !eager {
            // The rail of the data frames gets its endpoint now, while waiting is
            // allowed: they are sent from progress.
            ensure(self.max_data);
        }
        let route = ensure(if eager { len } else { 0 });
        let mut h = Header::new(if eager { Kind::Eager } else { Kind::Rts });
        h.context = context;
        h.dest = dest as u32;
        h.source = source;
        h.tag = tag;
        h.len = len as u64;
        let waits = !eager || mode == SendMode::Synchronous;
        let done = waits.then(|| {
            let done = Completion::new();
            h.id = self.new_id();
            self.sends.lock().unwrap().insert(
                h.id,
                PendingSend {
                    buf,
                    len,
                    done: done.clone(),
                    to,
                    context,
                    dest: dest as u32,
                },
            );
            done
        });
        let payload: &[u8] = if eager {
            // SAFETY: `buf` is valid for `len` bytes by contract.
            unsafe { std::slice::from_raw_parts(buf, len) }
        } else {
            h.addr = buf as u64;
            // Offered for a single cross-memory copy only when the job's rails
            // include shared memory: over tcp-only networks the data travels on tcp.
            if net.links.has_shared_memory() {
                h.pid = net.pid;
                h.node = net.node;
            }
            &[]
        };
        self.post(to, Some(route), h, payload)
            .unwrap_or_else(|e| self.fail(e));
        match done {
            Some(d) => Pending::Waiting(d),
            None => Pending::Done(Status::empty()),
        }
    }

    /// MPI_Cancel of the send `done` if it still waits for its receiver: asks
    /// the receiving process to withdraw it. The send then completes as
    /// cancelled (the message had not matched) or normally (it had).
    pub(crate) fn cancel_send(&self, done: &Arc<Completion>) {
        let found = self
            .sends
            .lock()
            .unwrap()
            .iter()
            .find(|(_, s)| Arc::ptr_eq(&s.done, done))
            .map(|(&id, s)| (id, s.to, s.context, s.dest));
        let Some((id, to, context, dest)) = found else {
            return;
        };
        let mut h = Header::new(Kind::Cancel);
        h.id = id;
        h.context = context;
        h.dest = dest;
        self.defer(Deferred::Frame { to, header: h });
        self.flush_deferred();
    }

    /// A broken network ends the job: the launcher names this process. Under
    /// recovery in place a peer died and a new run is coming: a rank waits
    /// for it here (and leaves for it from here); anyone else still ends the
    /// process.
    fn fail(&self, e: io::Error) -> ! {
        if crate::process::survives_peer_deaths()
            && crate::current_rank().is_some()
            && mpcrs_scheduler::in_ult()
        {
            tracing::debug!("network: {e}; waiting for the new run");
            crate::process::await_new_run()
        }
        mpcrs_settings::report!(error, "mpcrs: process {}: network: {e}", self.me);
        crate::process::abort_job(1)
    }

    /// [`Fabric::fail`] for what progress sends or takes in: under recovery in
    /// place, what was for a dead peer is dropped (its run is ending).
    fn lose(&self, e: io::Error) {
        if crate::process::survives_peer_deaths() {
            tracing::debug!("network: {e}; dropped, a new run is coming");
            return;
        }
        self.fail(e)
    }

    /// A read error from a peer while finishing: once every process passed the
    /// final fence, peers exit and their links reset. No MPI traffic is left to
    /// carry by then. A peer that died instead (its link closed without a
    /// goodbye) ends the job even then where this process is the one to end
    /// it: the others may wait for it in the fence.
    fn fail_or_close(&self, e: io::Error) -> bool {
        if crate::process::survives_peer_deaths() {
            // A peer died: the launcher starts a new run, with a new network.
            tracing::debug!("network: {e}; a new run is coming");
            return false;
        }
        if mpcrs_signaling::Vanished::of(&e).is_some() {
            if self.ends_job_on_death {
                self.fail(e)
            }
            // mpcrs-run ends the job: rounds go on meanwhile.
            return false;
        }
        if !self.finishing.load(Ordering::Acquire) {
            self.fail(e)
        }
        self.progress_gate.close_now();
        false
    }

    /// One round: drivers, signaling, connect requests, deferred answers.
    pub(crate) fn progress(&self) -> bool {
        self.progress_gate
            .try_enter()
            .is_some_and(|_round| self.round())
    }

    /// [`Fabric::progress`] from scheduler worker `worker`: its way through
    /// the gate costs no atomic read-modify-write.
    fn progress_as(&self, worker: usize) -> bool {
        self.progress_gate
            .try_enter_worker(worker)
            .is_some_and(|_round| self.round())
    }

    fn round(&self) -> bool {
        let net = self.net();
        // With shared memory in the rails, sockets are read every few rounds only.
        let shared_memory = net.links.has_shared_memory();
        let sockets = !shared_memory || self.socket_pace.due();
        let mut moved = false;
        if sockets {
            let signaling = net
                .signaling
                .progress()
                .unwrap_or_else(|e| self.fail_or_close(e));
            let links = net
                .links
                .progress_sockets()
                .unwrap_or_else(|e| self.fail_or_close(e));
            self.socket_pace.read(signaling || links);
            moved = signaling || links;
        }
        moved |= net
            .links
            .progress_memory_rails()
            .unwrap_or_else(|e| self.fail_or_close(e));
        if self.progress_gate.is_closed() {
            return moved;
        }
        while let Some(c) = net.signaling.try_receive() {
            moved = true;
            match &c.kind {
                ControlKind::Checkpoint { epoch, step, .. } => {
                    let (sequence, step) = (*epoch, *step);
                    self.checkpoint_inbox.lock().unwrap().push(c);
                    (self.on_checkpoint_message)(sequence, step);
                    continue;
                }
                ControlKind::Deadlock {
                    round,
                    step,
                    values,
                } => {
                    if let Some(handle) = DEADLOCK_MESSAGES.get() {
                        handle(c.source, *round, *step, values);
                    }
                }
                ControlKind::ConnectRequest { rail, address }
                    if *rail != mpcrs_signaling::SIGNALING_RAIL =>
                {
                    net.links
                        .accept(c.source, *rail, address, &net.signaling)
                        .unwrap_or_else(|e| self.lose(e));
                }
                _ => {}
            }
            self.control_handled.fetch_add(1, Ordering::AcqRel);
        }
        moved | self.flush_deferred()
    }

    /// Sends the deferred answers and rendezvous data; returns whether there were
    /// any. Not from inside a delivery (see the module's notes).
    ///
    /// They answer messages already under way (a clear-to-send, the data of
    /// a rendezvous, a cancellation's answer), so they leave while either
    /// gate is open: a process whose ranks all entered `MPIX_Checkpoint`
    /// holds its ranks' sends but lets its window agents answer, and an
    /// agent's answer above the eager limit is a rendezvous whose frames
    /// queue here. A rank of another process may wait for one before it can
    /// enter the checkpoint. Once both gates are closed they stay queued (the
    /// drain counts again after that) and belong to the image.
    pub(crate) fn flush_deferred(&self) -> bool {
        // Most rounds have nothing to send: no gate to pass then. An answer
        // queued just after this look is sent by the next round.
        if self.deferred.is_empty() {
            return false;
        }
        let Some(_pass) = self
            .send_gate
            .try_enter()
            .or_else(|| self.agent_gate.try_enter())
        else {
            return false;
        };
        let mut moved = false;
        while let Some(d) = self.deferred.pop() {
            moved = true;
            match d {
                Deferred::Frame { to, header } => self
                    .post(to, None, header, &[])
                    .unwrap_or_else(|e| self.lose(e)),
                Deferred::Data {
                    to,
                    token,
                    buf,
                    len,
                    done,
                } => {
                    let mut offset = 0;
                    while offset < len {
                        let n = (len - offset).min(self.max_data);
                        let mut h = Header::new(Kind::Data);
                        h.id = token;
                        h.addr = offset as u64;
                        // SAFETY: the send's buffer is valid for `len` bytes until
                        // `done` (Deferred contract).
                        let chunk = unsafe { std::slice::from_raw_parts(buf.add(offset), n) };
                        self.post(to, None, h, chunk)
                            .unwrap_or_else(|e| self.lose(e));
                        offset += n;
                    }
                    // The drivers copied every chunk: the send's buffer is free.
                    done.complete(Status::empty());
                }
            }
        }
        moved
    }

    /// Asks the launcher, over PMI-2, to end the whole job: this process
    /// ends with `code` (see `process::abort_job`). Skipped if the
    /// connection is busy (this process is failing inside a PMI call).
    fn tell_launcher_abort(code: i32) {
        let Some(f) = FABRIC.get() else { return };
        // Rings a peer killed outright never opened: no one else removes
        // them under this launcher.
        f.net().links.unlink_ring_names();
        let Ok(mut kvs) = f.net().kvs.try_lock() else {
            return;
        };
        if let Some(kvs) = kvs.take() {
            let _ = kvs.abort(&format!("process {} ended with status {code}", f.me));
        }
    }

    /// Waits until every process got here (MPI_Finalize's end): this process's
    /// workers keep serving the others meanwhile.
    pub(crate) fn finish(&self) {
        self.finishing.store(true, Ordering::Release);
        if let Some(mut kvs) = self.net().kvs.lock().unwrap().take() {
            if let Err(e) = kvs.fence().and_then(|_| kvs.finalize()) {
                self.fail(e);
            }
            // Every process has read them long ago (on other hosts of an
            // mpcrs-run job, no launcher removes them).
            machine::Notes::of_job(&self.net().job).remove();
        }
        // Every process is through the fence: this one leaves in order.
        self.net().signaling.say_goodbye(Duration::from_secs(2));
    }

    /// Frames this process sent to others, and frames from others it acted
    /// upon (the deadlock check: equal sums over the job mean none in flight).
    pub(crate) fn frame_counts(&self) -> (u64, u64) {
        let sent = self
            .net()
            .links
            .counters
            .iter()
            .map(|k| k.messages.load(Ordering::Acquire))
            .sum();
        (sent, self.frames_handled.load(Ordering::Acquire))
    }

    /// `--net-stats`: endpoints, messages and bytes per rail, control messages.
    pub(crate) fn stats(&self) -> String {
        let mut out = String::new();
        let net = self.net();
        for (rail, k) in net.links.rails().rails.iter().zip(&net.links.counters) {
            let messages = k.messages.load(Ordering::Relaxed);
            let sizes = if messages == 0 {
                String::new()
            } else {
                format!(
                    " (frames of {} to {} bytes)",
                    k.smallest.load(Ordering::Relaxed),
                    k.largest.load(Ordering::Relaxed)
                )
            };
            out.push_str(&format!(
                "mpcrs: net-stats process {}: rail {}: endpoints {} static + {} on demand, {messages} messages, {} bytes{sizes}\n",
                self.me,
                rail.name,
                k.static_endpoints.load(Ordering::Relaxed),
                k.ondemand_endpoints.load(Ordering::Relaxed),
                k.bytes.load(Ordering::Relaxed),
            ));
        }
        let s = net.signaling.stats();
        out.push_str(&format!(
            "mpcrs: net-stats process {}: signaling: links {} static + {} on demand, control messages {} sent, {} forwarded, {} delivered (hops: {} total, {} max); cross-memory copies: {} bytes; connections refused: {} (strangers to the job)\n",
            self.me,
            s.static_links,
            s.ondemand_links,
            s.sent,
            s.forwarded,
            s.delivered,
            s.hops_total,
            s.hops_max,
            self.cross_memory_bytes.load(Ordering::Relaxed),
            s.refused + net.links.refused_connections(),
        ));
        out
    }
}
