//! Checkpoints of a job of several processes (DESIGN.md section 7, seed 002
//! section 5.3). In each process the last rank into `MPIX_Checkpoint` is the
//! leader; the leaders then, over the signaling network:
//!
//! 1. drain: each sends process 0 its traffic counters; process 0 asks again
//!    until, over two rounds in a row, nothing changed, nothing is queued and
//!    the job took in every frame and control message it sent. Unmatched
//!    messages are then plain memory of their receiver and belong to its image;
//! 2. process 0 begins the epoch and names it; each leader closes its shared-
//!    memory rail and takes its snapshot (fork) into the epoch's directory;
//! 3. once process 0 heard of every snapshot, it lets the ranks go on (no process
//!    may send before every image is taken, or a restart would see it twice);
//! 4. each process's commit thread waits for its writer and tells process 0,
//!    whose commit thread commits the epoch when every image is durable.
//!
//! A process restored from the image resumes inside step 2: it joins the new
//! run's network (a fresh key-value store and ring, which is also a barrier of
//! the job) and its ranks return `Restart`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mpcrs_cr::{start_dump, DumpReport, PendingDump, PendingEpoch, Snapshot};

use super::{finish, refused_for_foreign_threads, CrState, Settings, PENDING, TAKING};
use crate::remote::{step, Fabric, Joining, Traffic};
use crate::run::JobConfig;

/// Checkpoints taken by this job so far (the same in every process: the call
/// is collective); names a checkpoint's coordination messages.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// The coordinating process.
const COORDINATOR: u32 = 0;

fn encode(t: &Traffic, refused: bool) -> Vec<(u32, u64)> {
    vec![
        (0, t.frames_sent),
        (1, t.frames_taken),
        (2, t.control_sent),
        (3, t.control_taken),
        (4, t.busy as u64),
        (5, refused as u64),
    ]
}

fn decode(c: &[(u32, u64)]) -> (Traffic, bool) {
    let get = |k: u32| value(c, k);
    (
        Traffic {
            frames_sent: get(0),
            frames_taken: get(1),
            control_sent: get(2),
            control_taken: get(3),
            busy: get(4) != 0,
        },
        get(5) != 0,
    )
}

fn value(c: &[(u32, u64)], k: u32) -> u64 {
    c.iter().find(|(i, _)| *i == k).map_or(0, |(_, v)| *v)
}

/// Between rounds of waiting that found nothing: the other ranks of the
/// process wait in the barrier, so the worker may sleep briefly.
fn pause() {
    std::thread::sleep(Duration::from_micros(50));
}

/// This process's counters once its own queued answers are out.
fn settled_traffic(fabric: &Fabric) -> Traffic {
    while fabric.progress() {}
    fabric.traffic()
}

/// Sends to every other process.
fn tell_all(fabric: &Fabric, sequence: u64, step: u8, counters: Vec<(u32, u64)>) {
    for p in (0..fabric.processes()).filter(|&p| p != fabric.me) {
        if let Err(e) = fabric.send_checkpoint(p, sequence, step, counters.clone()) {
            fabric.fail_checkpoint(e);
        }
    }
}

impl Fabric {
    fn fail_checkpoint(&self, e: std::io::Error) -> ! {
        eprintln!("mpcrs: process {}: checkpoint: network: {e}", self.me);
        crate::universe::abort_job(1)
    }

    fn tell_coordinator(&self, sequence: u64, step: u8, counters: Vec<(u32, u64)>) {
        if let Err(e) = self.send_checkpoint(COORDINATOR, sequence, step, counters) {
            self.fail_checkpoint(e);
        }
    }
}

/// Process 0's part of the drain: rounds of counters until the job is still.
/// Returns the processes that refused (threads of their own), if any.
fn coordinate_drain(fabric: &Fabric, sequence: u64, refused_here: bool) -> Vec<u32> {
    let n = fabric.processes() as usize;
    let mut previous: Option<Vec<Traffic>> = None;
    loop {
        let mut all = vec![Traffic::default(); n];
        let mut refused = Vec::new();
        all[0] = settled_traffic(fabric);
        if refused_here {
            refused.push(0);
        }
        for _ in 1..n {
            let (from, c) = fabric.wait_checkpoint(sequence, &[step::COUNT], None, &pause);
            let (t, r) = decode(&c);
            all[from as usize] = t;
            if r {
                refused.push(from);
            }
        }
        let sum = |f: fn(&Traffic) -> u64| all.iter().map(f).sum::<u64>();
        let balanced = sum(|t| t.frames_sent) == sum(|t| t.frames_taken)
            && sum(|t| t.control_sent) == sum(|t| t.control_taken)
            && all.iter().all(|t| !t.busy);
        if balanced && previous.as_ref() == Some(&all) {
            refused.sort_unstable();
            return refused;
        }
        previous = Some(all);
        tell_all(fabric, sequence, step::AGAIN, Vec::new());
    }
}

/// The leader's part in a job of several processes.
pub(super) fn take(settings: &Settings, ranks: usize) -> CrState {
    let fabric = Fabric::expect();
    let me = fabric.me;
    let _one = TAKING.lock().unwrap_or_else(|e| e.into_inner());
    // The previous epoch is committed first (process 0 waits for every image):
    // epochs commit in order, and no image holds a commit under way.
    finish();
    let sequence = SEQUENCE.fetch_add(1, Ordering::AcqRel) + 1;
    fabric.forget_checkpoints_before(sequence);
    let refused_here = refused_for_foreign_threads(&format!("process {me}: "));

    // 1. Drain, and 2. the epoch's number (0: none).
    let mut epoch: Option<PendingEpoch> = None;
    let k = if me == COORDINATOR {
        let refused = coordinate_drain(fabric, sequence, refused_here);
        let k = if refused.is_empty() {
            let dir = &settings.dir;
            match dir.next_epoch().and_then(|k| dir.begin(k)) {
                Ok(e) => {
                    let k = e.epoch();
                    epoch = Some(e);
                    k
                }
                Err(e) => {
                    eprintln!("mpcrs: checkpoint failed: {}: {e}", dir.root().display());
                    0
                }
            }
        } else {
            eprintln!("mpcrs: checkpoint failed: processes {refused:?} run threads of their own");
            0
        };
        tell_all(fabric, sequence, step::DRAINED, vec![(0, k)]);
        k
    } else {
        loop {
            let t = settled_traffic(fabric);
            fabric.tell_coordinator(sequence, step::COUNT, encode(&t, refused_here));
            let (_, c) = fabric.wait_checkpoint(
                sequence,
                &[step::AGAIN, step::DRAINED],
                Some(COORDINATOR),
                &pause,
            );
            if let Some(k) = c.iter().find(|(i, _)| *i == 0).map(|(_, k)| *k) {
                break k;
            }
        }
    };
    if k == 0 {
        return CrState::Error;
    }

    // 2. Snapshot, with the shared-memory rail closed and progress held still.
    fabric.close_high_speed_rails();
    super::flush_output();
    let image = settings
        .dir
        .partial_dir(k)
        .join(format!("process-{me}.img"));
    fabric.suspend();
    let dump = match start_dump(&image) {
        Ok(Snapshot::Restored) => return rejoin(),
        Ok(Snapshot::Writing(d)) => Some(d),
        Err(e) => {
            eprintln!("mpcrs: process {me}: checkpoint epoch {k} failed: {e}");
            None
        }
    };
    fabric.resume();

    // 3. Every snapshot taken: the ranks go on.
    let ok = if me == COORDINATOR {
        let mut ok = dump.is_some();
        for _ in 1..fabric.processes() {
            let (_, c) = fabric.wait_checkpoint(sequence, &[step::SNAPPED], None, &pause);
            ok &= value(&c, 0) != 0;
        }
        tell_all(fabric, sequence, step::GO, vec![(0, ok as u64)]);
        ok
    } else {
        fabric.tell_coordinator(sequence, step::SNAPPED, vec![(0, dump.is_some() as u64)]);
        let (_, c) = fabric.wait_checkpoint(sequence, &[step::GO], Some(COORDINATOR), &pause);
        value(&c, 0) != 0
    };

    // 4. Durability, then the commit (process 0).
    let Some(dump) = dump else {
        return CrState::Error;
    };
    let committer = Committer {
        sequence,
        epoch: if ok { epoch } else { None },
        ranks,
        keep: settings.keep,
        store: settings.dir.clone(),
    };
    let commit = std::thread::Builder::new()
        .name("mpcrs-ckpt-commit".into())
        .spawn(move || committer.run(dump, ok));
    match commit {
        Ok(h) => *PENDING.lock().unwrap() = Some(h),
        Err(e) => {
            // Without its thread the image is never reported: process 0 would wait
            // for it for ever.
            eprintln!("mpcrs: process {me}: checkpoint: cannot start the commit thread: {e}");
            crate::universe::abort_job(1)
        }
    }
    if ok {
        CrState::Checkpoint
    } else {
        CrState::Error
    }
}

/// In a process just restored: join the new run's network. The environment is
/// the one of the process that restored this one (the image's is the old run's).
fn rejoin() -> CrState {
    let fabric = Fabric::expect();
    let handed = mpcrs_cr::restore::handed_over_environment().unwrap_or_default();
    let var = |k: &str| {
        handed
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.clone())
    };
    let joined = JobConfig::from_variables(var).and_then(|cfg| {
        fabric.rejoin(&Joining {
            cfg: &cfg,
            var: &var,
        })
    });
    if let Err(e) = joined {
        eprintln!(
            "mpcrs: process {}: restarted, but cannot join the job: {e}",
            fabric.me
        );
        crate::universe::abort_job(1)
    }
    CrState::Restart
}

/// The commit thread of one process.
struct Committer {
    sequence: u64,
    /// Process 0's epoch to commit (`None` elsewhere, or when a snapshot failed).
    epoch: Option<PendingEpoch>,
    ranks: usize,
    keep: usize,
    store: mpcrs_cr::CheckpointDir,
}

fn figures(r: &Result<DumpReport, mpcrs_cr::ImageError>) -> Vec<(u32, u64)> {
    match r {
        Ok(r) => vec![
            (0, 1),
            (1, r.bytes),
            (2, r.stored_bytes),
            (3, r.stall.as_micros() as u64),
            (4, r.write.as_micros() as u64),
        ],
        Err(_) => vec![(0, 0)],
    }
}

impl Committer {
    fn run(self, dump: PendingDump, taken: bool) {
        let fabric = Fabric::expect();
        let report = dump.wait();
        if let Err(e) = &report {
            eprintln!("mpcrs: process {}: checkpoint image failed: {e}", fabric.me);
        }
        if !taken {
            return;
        }
        if fabric.me != COORDINATOR {
            fabric.tell_coordinator(self.sequence, step::DURABLE, figures(&report));
            return;
        }
        let Some(epoch) = self.epoch else {
            return;
        };
        let k = epoch.epoch();
        let mut all = vec![figures(&report)];
        for _ in 1..fabric.processes() {
            let (_, c) = fabric.wait_checkpoint(self.sequence, &[step::DURABLE], None, &|| {
                std::thread::sleep(Duration::from_millis(1))
            });
            all.push(c);
        }
        if all.iter().any(|c| value(c, 0) == 0) {
            eprintln!(
                "mpcrs: checkpoint epoch {k} failed, the previous one stays: an image is missing"
            );
            return;
        }
        let host = crate::launch::hosts::local_hostname();
        let processes = fabric.processes() as usize;
        let manifest =
            crate::manifest::JobManifest::of_this_job(self.ranks, processes, vec![host]).to_json();
        if let Err(e) = epoch.commit(manifest.as_bytes()) {
            eprintln!("mpcrs: checkpoint epoch {k} not committed, the previous one stays: {e}");
            return;
        }
        let _ = self.store.prune(self.keep);
        let sum = |i: u32| all.iter().map(|c| value(c, i)).sum::<u64>();
        let max = |i: u32| all.iter().map(|c| value(c, i)).max().unwrap_or(0);
        eprintln!(
            "mpcrs: checkpoint epoch {k}: {} bytes ({} stored) in {processes} images, application stall {:.1} ms, write {:.0} MB/s",
            sum(1),
            sum(2),
            max(3) as f64 / 1e3,
            sum(2) as f64 / max(4).max(1) as f64,
        );
    }
}
