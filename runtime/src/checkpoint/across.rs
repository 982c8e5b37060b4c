//! Checkpoints of a job of several processes (DESIGN.md section 7, seed 002
//! section 5.3). Each process has a leader: the last rank into
//! `MPIX_Checkpoint`, or, for a checkpoint asked from outside (SIGUSR1,
//! `--checkpoint-interval`, which process 0 turns into a `START` to all), the
//! request thread while the ranks run on. The leaders then, over the signaling
//! network:
//!
//! 1. hold: frames stop leaving the process (ranks that send wait at the
//!    network's gate, inside their MPI call; answers stay queued in memory),
//!    but for those of window agents: a rank of a process that has not
//!    entered `MPIX_Checkpoint` yet may wait for an agent's answer first;
//! 2. drain: each sends process 0 its traffic counters; once every process
//!    holds (its counters came), process 0 has the agents held too, then asks
//!    again until, over two rounds in a row, nothing changed and the job took
//!    in every frame and control message it sent. Unmatched messages and queued answers
//!    are then plain memory of their process and belong to its image;
//! 3. process 0 begins the epoch and names it; each leader stops progress,
//!    closes its shared-memory rail and takes its snapshot (fork) into the
//!    epoch's directory;
//! 4. once process 0 heard of every snapshot, the gate opens (no process may
//!    send before every image is taken, or a restart would see it twice);
//! 5. each process's commit thread waits for its writer and tells process 0,
//!    whose commit thread commits the epoch when every image is durable.
//!
//! A process restored from the image resumes inside step 3: it joins the new
//! run's network (a fresh key-value store and ring, which is also a barrier of
//! the job), connects where its queued answers go, opens the gate, and its
//! ranks return `Restart` (or, after a checkpoint asked from outside, go on
//! where they were).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mpcrs_cr::{start_dump, DumpReport, PendingDump, PendingEpoch, Snapshot};

use super::network::{self, fail, wait_message, JobNetwork, Traffic};
use super::{finish_before_checkpoint, refused_here, CrState, Rebuild, Settings, TAKING};
use crate::config::JobConfig;

/// The entry of an `AGAIN` that has the window agents held.
const HOLD_AGENTS: u32 = 1;

/// Sequence numbers of checkpoints asked from outside (process 0 names them)
/// have this bit; those of `MPIX_Checkpoint` count apart, in every process alike.
const REQUESTED: u64 = 1 << 63;

/// The coordination messages of a checkpoint (their `step`).
pub(super) mod step {
    /// Process 0 to all: a checkpoint asked from outside begins.
    pub(in crate::checkpoint) const START: u8 = 7;
    /// Leader to process 0: this process's traffic counters.
    pub(in crate::checkpoint) const COUNT: u8 = 1;
    /// Process 0 to all: count again.
    pub(in crate::checkpoint) const AGAIN: u8 = 2;
    /// Process 0 to all: nothing is in flight; the epoch number.
    pub(in crate::checkpoint) const DRAINED: u8 = 3;
    /// Leader to process 0: the snapshot is taken (or failed).
    pub(in crate::checkpoint) const SNAPPED: u8 = 4;
    /// Process 0 to all: every snapshot is taken, ranks may go on.
    pub(in crate::checkpoint) const GO: u8 = 5;
    /// To process 0: this process's image is durable (or failed), with figures.
    pub(in crate::checkpoint) const DURABLE: u8 = 6;
    /// Process 0 to all: the epoch is committed (1) or not (0); post-processing
    /// may begin.
    pub(in crate::checkpoint) const COMMITTED: u8 = 8;
    /// A restored process to process 0: it finished a step of the rebuild of
    /// shared state; process 0 to all: every process did.
    pub(in crate::checkpoint) const REBUILT: u8 = 9;
    pub(in crate::checkpoint) const REBUILD_GO: u8 = 10;
}

/// Checkpoints taken by this job so far (the same in every process: the call
/// is collective); names a checkpoint's coordination messages.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// The coordinating process.
const COORDINATOR: u32 = 0;

/// Why a process takes no part in a checkpoint (sent with its counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    None = 0,
    /// The process holds state an image cannot (threads of the program's
    /// own, memory shared with other processes): it said why.
    Here = 1,
    /// Its ranks are done, or it is taking another checkpoint: it will not
    /// count again, the checkpoint ends at once.
    Unavailable = 2,
}

fn encode(t: &Traffic, refusal: Refusal) -> Vec<(u32, u64)> {
    vec![
        (0, t.frames_sent),
        (1, t.frames_taken),
        (2, t.control_sent),
        (3, t.control_taken),
        (5, refusal as u64),
    ]
}

fn decode(c: &[(u32, u64)]) -> (Traffic, Refusal) {
    let get = |k: u32| value(c, k);
    let refusal = match get(5) {
        0 => Refusal::None,
        1 => Refusal::Here,
        _ => Refusal::Unavailable,
    };
    (
        Traffic {
            frames_sent: get(0),
            frames_taken: get(1),
            control_sent: get(2),
            control_taken: get(3),
        },
        refusal,
    )
}

fn value(c: &[(u32, u64)], k: u32) -> u64 {
    c.iter().find(|(i, _)| *i == k).map_or(0, |(_, v)| *v)
}

/// Between rounds of waiting that found nothing: the other ranks of the
/// process wait in the barrier (or at the network's gate), so the thread may
/// sleep briefly. A leader that is a rank sleeps as a ULT: the window agents
/// of its worker answer other processes meanwhile (their ranks may wait for
/// that before they can enter the checkpoint).
fn pause() {
    if mpcrs_scheduler::in_ult() {
        mpcrs_scheduler::sleep(Duration::from_micros(50));
    } else {
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// This process's counters once what it has received is taken in.
fn settled_traffic(fabric: &dyn JobNetwork) -> Traffic {
    while fabric.progress() {}
    fabric.traffic()
}

/// Sends to every other process.
fn tell_all(fabric: &dyn JobNetwork, sequence: u64, step: u8, counters: Vec<(u32, u64)>) {
    for p in (0..fabric.processes()).filter(|&p| p != fabric.me()) {
        if let Err(e) = fabric.send_message(p, sequence, step, counters.clone()) {
            fail(fabric, e);
        }
    }
}

/// Sends to process 0.
fn tell_coordinator(net: &dyn JobNetwork, sequence: u64, step: u8, counters: Vec<(u32, u64)>) {
    if let Err(e) = net.send_message(COORDINATOR, sequence, step, counters) {
        fail(net, e);
    }
}

/// The sequence number of a checkpoint process 0 asked for (its `START`),
/// taken out of the inbox.
pub(super) fn take_start(net: &dyn JobNetwork) -> Option<u64> {
    net.take_message(&|_, step, _| step == step::START)
        .map(|m| m.sequence)
}

/// Drops coordination messages of earlier checkpoints of `sequence`'s kind
/// (those of a checkpoint that failed on the way).
fn forget_checkpoints_before(net: &dyn JobNetwork, sequence: u64) {
    let kind = sequence & REQUESTED;
    net.retain_messages(&|epoch, _, _| epoch & REQUESTED != kind || epoch >= sequence);
}

/// Process 0's part of the drain: rounds of counters until the job is still.
/// Returns the processes that refused, and why (an unavailable one ends the
/// rounds at once).
fn coordinate_drain(fabric: &dyn JobNetwork, sequence: u64, here: Refusal) -> Vec<(u32, Refusal)> {
    let n = fabric.processes() as usize;
    let mut previous: Option<Vec<Traffic>> = None;
    let mut agents_held = false;
    loop {
        let mut all = vec![Traffic::default(); n];
        let mut refused = Vec::new();
        all[0] = settled_traffic(fabric);
        if here != Refusal::None {
            refused.push((0, here));
        }
        for _ in 1..n {
            let (from, c) = wait_message(fabric, sequence, &[step::COUNT], None, &pause);
            let (t, r) = decode(&c);
            all[from as usize] = t;
            if r != Refusal::None {
                refused.push((from, r));
            }
            if r == Refusal::Unavailable {
                return refused;
            }
        }
        if !agents_held {
            // Every process holds its ranks: no rank waits for an agent's
            // answer any more. Counting starts over with the agents held.
            fabric.hold_agents();
            agents_held = true;
            tell_all(fabric, sequence, step::AGAIN, vec![(HOLD_AGENTS, 1)]);
            continue;
        }
        let sum = |f: fn(&Traffic) -> u64| all.iter().map(f).sum::<u64>();
        let balanced = sum(|t| t.frames_sent) == sum(|t| t.frames_taken)
            && sum(|t| t.control_sent) == sum(|t| t.control_taken);
        if balanced && previous.as_ref() == Some(&all) {
            refused.sort_unstable_by_key(|(p, _)| *p);
            return refused;
        }
        previous = Some(all);
        tell_all(fabric, sequence, step::AGAIN, Vec::new());
    }
}

/// Why process 0 gives up a checkpoint, for its message.
fn refusals(refused: &[(u32, Refusal)]) -> String {
    let which = |r: Refusal| {
        refused
            .iter()
            .filter(|(_, x)| *x == r)
            .map(|(p, _)| p.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut why = Vec::new();
    let own = which(Refusal::Here);
    if !own.is_empty() {
        why.push(format!(
            "process(es) {own} hold state an image cannot (see their messages)"
        ));
    }
    let gone = which(Refusal::Unavailable);
    if !gone.is_empty() {
        why.push(format!(
            "process(es) {gone} are ending or taking another checkpoint"
        ));
    }
    why.join("; ")
}

/// `MPIX_Checkpoint`'s leader in a job of several processes.
pub(super) fn take(settings: &'static Settings, ranks: usize) -> CrState {
    let _one = TAKING.lock().unwrap_or_else(|e| e.into_inner());
    // The previous epoch is committed first (process 0 waits for every image):
    // epochs commit in order, and no image holds a commit under way.
    finish_before_checkpoint();
    let sequence = SEQUENCE.fetch_add(1, Ordering::AcqRel) + 1;
    checkpoint(settings, ranks, sequence)
}

/// Checkpoints asked from outside so far (process 0 numbers them).
static REQUESTS: AtomicU64 = AtomicU64::new(0);

/// Process 0's request thread: a checkpoint asked from outside (SIGUSR1,
/// `--checkpoint-interval`), wherever the ranks are. `None` when another is
/// under way or the ranks are done.
pub(super) fn request(settings: &'static Settings) -> Option<CrState> {
    let fabric = network::expect();
    let _one = available()?;
    finish_before_checkpoint();
    let sequence = REQUESTED | (REQUESTS.fetch_add(1, Ordering::AcqRel) + 1);
    tell_all(fabric, sequence, step::START, Vec::new());
    Some(checkpoint(settings, fabric.ranks(), sequence))
}

/// Another process's request thread, once process 0 started checkpoint
/// `sequence`.
pub(super) fn answer(settings: &'static Settings, sequence: u64) -> CrState {
    let fabric = network::expect();
    let Some(_one) = available() else {
        let refusal = encode(&Traffic::default(), Refusal::Unavailable);
        tell_coordinator(fabric, sequence, step::COUNT, refusal);
        return CrState::Error;
    };
    finish_before_checkpoint();
    checkpoint(settings, fabric.ranks(), sequence)
}

/// The checkpoint lock, unless a checkpoint is under way or the ranks of this
/// process are done (an image must find them running).
fn available() -> Option<std::sync::MutexGuard<'static, ()>> {
    let one = match TAKING.try_lock() {
        Ok(g) => g,
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return None,
    };
    (!super::RANKS_DONE.load(Ordering::Acquire)).then_some(one)
}

/// One checkpoint of the job, in every process alike (the caller holds
/// [`TAKING`]). The ranks are either all in `MPIX_Checkpoint` or running: the
/// network's gate holds their sends from the drain until every image is taken.
fn checkpoint(settings: &'static Settings, ranks: usize, sequence: u64) -> CrState {
    let fabric = network::expect();
    let me = fabric.me();
    forget_checkpoints_before(fabric, sequence);
    let here = if refused_here(&format!("process {me}: "), sequence & REQUESTED != 0) {
        Refusal::Here
    } else {
        Refusal::None
    };
    fabric.hold();
    tracing::debug!(sequence, refusal = ?here, "checkpoint: sends held, draining");

    // 1. Drain, and 2. the epoch's number (0: none).
    let mut epoch: Option<PendingEpoch> = None;
    let k = if me == COORDINATOR {
        let refused = coordinate_drain(fabric, sequence, here);
        let k = if refused.is_empty() {
            let dir = &settings.dir;
            match dir.next_epoch().and_then(|k| dir.begin(k)) {
                Ok(e) => {
                    let k = e.epoch();
                    epoch = Some(e);
                    k
                }
                Err(e) => {
                    mpcrs_settings::report!(
                        error,
                        "mpcrs: checkpoint failed: {}: {e}",
                        dir.root().display()
                    );
                    0
                }
            }
        } else {
            mpcrs_settings::report!(error, "mpcrs: checkpoint failed: {}", refusals(&refused));
            0
        };
        tell_all(fabric, sequence, step::DRAINED, vec![(0, k)]);
        k
    } else {
        loop {
            let t = settled_traffic(fabric);
            tell_coordinator(fabric, sequence, step::COUNT, encode(&t, here));
            let (_, c) = wait_message(
                fabric,
                sequence,
                &[step::AGAIN, step::DRAINED],
                Some(COORDINATOR),
                &pause,
            );
            if let Some(k) = c.iter().find(|(i, _)| *i == 0).map(|(_, k)| *k) {
                break k;
            }
            if c.iter().any(|(i, _)| *i == HOLD_AGENTS) {
                fabric.hold_agents();
            }
        }
    };
    if k == 0 {
        fabric.release();
        return CrState::Error;
    }

    tracing::debug!(
        sequence,
        epoch = k,
        "checkpoint: drained, taking the snapshot"
    );
    // 2. Snapshot, with progress held still and the shared-memory rail closed.
    fabric.suspend();
    fabric.close_high_speed_rails();
    super::flush_output();
    // The image goes to node-local storage (L1); helpers copy it on once the
    // epoch is committed.
    let started = settings
        .l1_image(k)
        .map_err(|e| {
            format!(
                "node-local storage {}: {e}",
                settings.local.root().display()
            )
        })
        .and_then(|image| start_dump(&image, settings.dump_options(k)).map_err(|e| e.to_string()));
    let dump = match started {
        Ok(Snapshot::Restored) => {
            return rejoin(sequence);
        }
        Ok(Snapshot::Writing(d)) => Some(d),
        Err(e) => {
            mpcrs_settings::report!(
                error,
                "mpcrs: process {me}: checkpoint epoch {k} failed: {e}"
            );
            None
        }
    };
    fabric.resume();
    tracing::debug!(
        sequence,
        epoch = k,
        "checkpoint: snapshot taken, waiting for the others"
    );

    // 3. Every snapshot taken: the ranks go on.
    let ok = if me == COORDINATOR {
        let mut ok = dump.is_some();
        for _ in 1..fabric.processes() {
            let (_, c) = wait_message(fabric, sequence, &[step::SNAPPED], None, &pause);
            ok &= value(&c, 0) != 0;
        }
        tell_all(fabric, sequence, step::GO, vec![(0, ok as u64)]);
        ok
    } else {
        tell_coordinator(
            fabric,
            sequence,
            step::SNAPPED,
            vec![(0, dump.is_some() as u64)],
        );
        let (_, c) = wait_message(fabric, sequence, &[step::GO], Some(COORDINATOR), &pause);
        value(&c, 0) != 0
    };
    reopen(fabric);

    // 4. Durability, then the commit (process 0).
    let Some(dump) = dump else {
        return CrState::Error;
    };
    let committer = Committer {
        sequence,
        epoch: if ok { epoch } else { None },
        epoch_number: k,
        ranks,
        settings,
    };
    match super::spawn_commit(move || committer.run(dump, ok)) {
        Ok(()) => {}
        Err(e) => {
            // Without its thread the image is never reported: process 0 would wait
            // for it for ever.
            mpcrs_settings::report!(
                error,
                "mpcrs: process {me}: checkpoint: cannot start the commit thread: {e}"
            );
            crate::process::abort_job(1)
        }
    }
    if ok {
        CrState::Checkpoint
    } else {
        CrState::Error
    }
}

/// Lets frames out again, once the answers queued meanwhile have endpoints.
fn reopen(fabric: &dyn JobNetwork) {
    fabric.reconnect_deferred(&|| {
        fabric.progress();
    });
    fabric.release();
}

/// In a process just restored: join the new run's network. The environment is
/// the one of the process that restored this one (the image's is the old run's).
fn rejoin(sequence: u64) -> CrState {
    let fabric = network::expect();
    let handed = mpcrs_cr::restore::handed_over_environment().unwrap_or_default();
    let var = |k: &str| {
        handed
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.clone())
    };
    let joined = JobConfig::from_variables(var).and_then(|cfg| fabric.rejoin(&cfg, &var));
    if let Err(e) = joined {
        mpcrs_settings::report!(
            error,
            "mpcrs: process {}: restarted, but cannot join the job: {e}",
            fabric.me()
        );
        crate::process::abort_job(1)
    }
    // After joining: under another launcher, where the processes run now is
    // learned on joining.
    super::reload_settings_after_restore();
    // State shared between processes, made again step by step, every
    // process through each step before any goes on to the next.
    for (i, step) in [Rebuild::Make, Rebuild::Open, Rebuild::Settle]
        .into_iter()
        .enumerate()
    {
        super::rebuild(step);
        barrier(fabric, sequence, i as u64);
    }
    reopen(fabric);
    CrState::Restart
}

/// Every process of the job got here (round `round` of a restore).
fn barrier(fabric: &dyn JobNetwork, sequence: u64, round: u64) {
    let n = fabric.processes();
    if fabric.me() == COORDINATOR {
        for _ in 1..n {
            wait_message(fabric, sequence, &[step::REBUILT], None, &pause);
        }
        tell_all(fabric, sequence, step::REBUILD_GO, vec![(0, round)]);
    } else {
        tell_coordinator(fabric, sequence, step::REBUILT, vec![(0, round)]);
        wait_message(
            fabric,
            sequence,
            &[step::REBUILD_GO],
            Some(COORDINATOR),
            &pause,
        );
    }
}

/// The commit thread of one process.
struct Committer {
    sequence: u64,
    /// Process 0's epoch to commit (`None` elsewhere, or when a snapshot failed).
    epoch: Option<PendingEpoch>,
    epoch_number: u64,
    ranks: usize,
    settings: &'static Settings,
}

fn figures(r: &Result<DumpReport, mpcrs_cr::ImageError>) -> Vec<(u32, u64)> {
    match r {
        Ok(r) => vec![
            (0, 1),
            (1, r.bytes),
            (2, r.stored_bytes),
            (3, r.stall.as_micros() as u64),
            (4, r.write.as_micros() as u64),
            (5, r.parent.map_or(0, |p| p.epoch)),
            (6, r.cost.lost().as_micros() as u64),
            (7, r.cost.faults),
            (8, r.cost.staged_bytes),
        ],
        Err(_) => vec![(0, 0)],
    }
}

/// The most the processes of one host lost to the write of their images
/// (figure 6 of each), microseconds: the processes of a host share its
/// cores, so their losses add up; hosts lose theirs side by side.
fn lost_per_host(all: &[Vec<(u32, u64)>], senders: &[u32], nodes: &[u32]) -> u64 {
    let mut per_node: std::collections::BTreeMap<u32, u64> = Default::default();
    for (c, &p) in all.iter().zip(senders) {
        let node = nodes.get(p as usize).copied().unwrap_or(p);
        *per_node.entry(node).or_default() += value(c, 6);
    }
    per_node.into_values().max().unwrap_or(0)
}

impl Committer {
    fn run(self, dump: PendingDump, taken: bool) {
        let fabric = network::expect();
        let report = dump.wait();
        if let Err(e) = &report {
            mpcrs_settings::report!(
                error,
                "mpcrs: process {}: checkpoint image failed: {e}",
                fabric.me()
            );
        }
        let settle = |committed: bool| {
            let crc = report.as_ref().ok().map(|r| r.meta_crc);
            mpcrs_cr::incremental::settle(self.epoch_number, crc.filter(|_| committed));
        };
        if !taken {
            settle(false);
            return;
        }
        if fabric.me() != COORDINATOR {
            tell_coordinator(fabric, self.sequence, step::DURABLE, figures(&report));
            let (_, c) = wait_message(
                fabric,
                self.sequence,
                &[step::COMMITTED],
                Some(COORDINATOR),
                &|| std::thread::sleep(Duration::from_millis(1)),
            );
            settle(value(&c, 0) != 0);
            if value(&c, 0) != 0 && report.is_ok() {
                self.settings.post_process(self.epoch_number);
            }
            return;
        }
        let Some(epoch) = self.epoch else {
            settle(false);
            return;
        };
        let k = epoch.epoch();
        let mut all = vec![figures(&report)];
        let mut senders = vec![fabric.me()];
        for _ in 1..fabric.processes() {
            let (from, c) = wait_message(fabric, self.sequence, &[step::DURABLE], None, &|| {
                std::thread::sleep(Duration::from_millis(1))
            });
            all.push(c);
            senders.push(from);
        }
        if all.iter().any(|c| value(c, 0) == 0) {
            mpcrs_settings::report!(
                error,
                "mpcrs: checkpoint epoch {k} failed, the previous one stays: an image is missing"
            );
            tell_all(fabric, self.sequence, step::COMMITTED, vec![(0, 0)]);
            settle(false);
            return;
        }
        let sum = |i: u32| all.iter().map(|c| value(c, i)).sum::<u64>();
        let max = |i: u32| all.iter().map(|c| value(c, i)).max().unwrap_or(0);
        let figures = super::Figures {
            images: all.len(),
            bytes: sum(1),
            stored: sum(2),
            write: Duration::from_micros(max(4)),
            cost: mpcrs_settings::manifest::CheckpointCost {
                stall_us: max(3),
                lost_us: lost_per_host(&all, &senders, &self.settings.nodes),
                faults: sum(7),
                staged: sum(8),
            },
        };
        let parents: Vec<u64> = all.iter().map(|c| value(c, 5)).collect();
        let committed = super::commit_epoch(epoch, self.ranks, self.settings, &figures, &parents);
        settle(committed);
        tell_all(
            fabric,
            self.sequence,
            step::COMMITTED,
            vec![(0, committed as u64)],
        );
        if committed {
            self.settings.post_process(k);
        }
    }
}
