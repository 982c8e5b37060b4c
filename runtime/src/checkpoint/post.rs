//! Post-processing of a committed epoch (seed 002 section 6, seed 003): the
//! levels above L1 that the schedule gives it, this process's part of each
//! made by helper tasks (helpers.rs), the levels every process completed
//! recorded in the epoch's manifest by process 0, then node-local epochs no
//! longer kept pruned.
//!
//! - L2: this process sends its L1 image to its partner, and keeps the copies
//!   of the processes it is the partner of (`partner-of-Q.img`).
//! - L3: the members of this process's group encode their images together;
//!   this process keeps its parity shard (`parity-P.rs`).
//! - L4: this process copies its image into the epoch directory.

use mpcrs_cr::commit::{write_durably, MANIFEST};
use mpcrs_levels::store::{image_name, parity_name, partner_copy_name};
use mpcrs_levels::{completion, erasure, partner, placement, Level, Transport};

use super::helpers::{self, Helper, HelperIo};
use super::Settings;

/// Starts the post-processing of epoch `k`, just committed at L1, to the
/// levels `planned`.
pub(super) fn start(s: &'static Settings, k: u64, planned: Vec<Level>) {
    helpers::start(move || post_process(s, k, &planned));
}

/// Runs a level's part (`what` it is) and says whether it ended well, saying
/// why not; its time is logged at debug level.
fn run_part<T>(k: u64, me: usize, what: &str, part: impl FnOnce() -> std::io::Result<T>) -> bool {
    let started = std::time::Instant::now();
    let r = part();
    tracing::debug!(
        epoch = k,
        what,
        ms = started.elapsed().as_secs_f64() * 1e3,
        "part of the post-processing ended"
    );
    match r {
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            tracing::debug!(epoch = k, what, "stopped by the next checkpoint");
            false
        }
        Err(e) => {
            mpcrs_settings::report!(
                warn,
                "mpcrs: process {me}: checkpoint epoch {k}: {what} failed ({e}); the epoch stays usable from the levels below"
            );
            false
        }
    }
}

/// This process's parts of the levels of epoch `k` above L1, each as a helper.
fn start_parts(
    s: &'static Settings,
    k: u64,
    planned: &[Level],
    t: Option<&'static dyn Transport>,
) -> Vec<(Level, Helper<bool>)> {
    let me = s.me;
    let node = s.node();
    let image = s.local.image(node, k, me);
    let mut parts = Vec::new();
    if let (Some(t), true) = (t, planned.contains(&Level::Partner)) {
        let partners = placement::partners(&s.nodes);
        if let Some(to) = partners[me] {
            let image = image.clone();
            let part = helpers::spawn(move || {
                let what = format!("the partner copy to process {to}");
                run_part(k, me, &what, || partner::send_copy(t, to, k, &image))
            });
            parts.push((Level::Partner, part));
        }
        for from in partner::kept_by(&partners, me) {
            let dest = s.local.partner_copy(node, k, from);
            let part = helpers::spawn(move || {
                let what = format!("the partner copy of process {from}");
                run_part(k, me, &what, || partner::receive_copy(t, from, k, &dest))
            });
            parts.push((Level::Partner, part));
        }
    }
    if let (Some(t), true) = (t, planned.contains(&Level::Erasure)) {
        let group = placement::groups(&s.nodes, s.group_size)
            .into_iter()
            .find(|g| g.members.contains(&me))
            .map(|g| g.members)
            .unwrap_or_default();
        let (image, parity) = (image.clone(), s.local.parity(node, k, me));
        let part = helpers::spawn(move || {
            run_part(k, me, "the Reed-Solomon encoding", || {
                erasure::encode(t, &group, k, &image, &parity)
            })
        });
        parts.push((Level::Erasure, part));
    }
    if planned.contains(&Level::Global) {
        let l4 = s.dir.epoch_dir(k).join(image_name(me));
        let part = helpers::spawn(move || {
            run_part(k, me, "the copy to the global directory", || {
                mpcrs_levels::store::copy_durably(&HelperIo, &image, &l4)
            })
        });
        parts.push((Level::Global, part));
    }
    parts
}

fn post_process(s: &'static Settings, k: u64, planned: &[Level]) {
    let t = helpers::transport(s.stream);
    let planned = &reachable(k, planned, t.is_some());
    let parts = start_parts(s, k, planned, t);
    let mut failed: Vec<Level> = Vec::new();
    let mut made: Vec<Level> = Vec::new();
    for (level, part) in parts {
        if part.join() == Some(true) {
            made.push(level);
        } else {
            failed.push(level);
        }
    }
    // A level is finished here when every part of it is; L2 and L3 need other
    // processes.
    let finished: Vec<Level> = planned
        .iter()
        .copied()
        .filter(|&l| match l {
            Level::Local => true,
            l => !failed.contains(&l),
        })
        .collect();
    tracing::debug!(epoch = k, ?finished, ?made, "post-processing done here");
    let agreeing = std::time::Instant::now();
    let complete = match t {
        Some(t) => match completion::agree(t, k, &finished) {
            Ok(c) => c,
            Err(e) => {
                mpcrs_settings::report!(
                    warn,
                    "mpcrs: process {}: checkpoint epoch {k}: cannot report its levels ({e})",
                    s.me
                );
                None
            }
        },
        None => Some(finished),
    };
    tracing::debug!(
        epoch = k,
        ms = agreeing.elapsed().as_secs_f64() * 1e3,
        "levels agreed"
    );
    if let Some(complete) = complete {
        record(s, k, planned, &complete);
    }
    prune_local(s, k);
}

/// The levels of `planned` a job of this many processes can make: L2 and L3
/// place data on other processes, so a job of one process (no transport)
/// keeps L1 and L4, saying so once.
fn reachable(k: u64, planned: &[Level], several_processes: bool) -> Vec<Level> {
    static SAID: std::sync::Once = std::sync::Once::new();
    if several_processes {
        return planned.to_vec();
    }
    let (kept, dropped): (Vec<Level>, Vec<Level>) = planned
        .iter()
        .partition(|l| !matches!(l, Level::Partner | Level::Erasure));
    if !dropped.is_empty() {
        SAID.call_once(|| {
            mpcrs_settings::report!(
                warn,
                "mpcrs: checkpoint epoch {k}: {} {} two processes or more (run with -p 2 or more); this job has one, so its checkpoints get {} only",
                names(&dropped, " and "),
                if dropped.len() == 1 { "needs" } else { "need" },
                names(&kept, " and ")
            );
        });
    }
    kept
}

/// "L1, L2": the levels' names joined by `sep`.
fn names(levels: &[Level], sep: &str) -> String {
    levels
        .iter()
        .map(|l| format!("L{}", l.number()))
        .collect::<Vec<_>>()
        .join(sep)
}

/// Process 0: records in epoch `k`'s manifest the levels every process
/// completed, then prunes the global directory (keeping the newest epoch
/// complete at L4).
fn record(s: &Settings, k: u64, planned: &[Level], complete: &[Level]) {
    let dir = s.dir.epoch_dir(k);
    let path = dir.join(MANIFEST);
    let written = mpcrs_settings::JobManifest::read(&path).and_then(|mut m| {
        m.complete = complete.iter().map(|l| l.number()).collect();
        write_durably(&dir, MANIFEST, m.to_json().as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    });
    if let Err(e) = written {
        mpcrs_settings::report!(
            warn,
            "mpcrs: checkpoint epoch {k}: cannot record its levels: {e}"
        );
    }
    let missing: Vec<Level> = planned
        .iter()
        .copied()
        .filter(|l| !complete.contains(l))
        .collect();
    if !missing.is_empty() {
        mpcrs_settings::report!(
            info,
            "mpcrs: checkpoint epoch {k}: {} not complete (stopped by the next checkpoint, or failed); the epoch is usable from {}",
            names(&missing, ", "),
            names(complete, ", ")
        );
    }
    prune_global(s);
}

/// Prunes the global directory to `--keep` epochs, keeping the newest epoch
/// complete at L4 too.
pub(super) fn prune_global(s: &Settings) {
    let newest: Vec<u64> = newest_global(&s.dir).into_iter().collect();
    let _ = s.dir.prune_except(s.keep, &newest);
}

/// The newest epoch of `dir` complete at L4.
fn newest_global(dir: &mpcrs_cr::CheckpointDir) -> Option<u64> {
    let epochs = dir.epochs().ok()?;
    epochs.into_iter().rev().find(|&k| {
        mpcrs_settings::JobManifest::read(&dir.epoch_dir(k).join(MANIFEST))
            .is_ok_and(|m| m.complete.contains(&Level::Global.number()))
    })
}

/// Removes this process's node-local files of epochs no longer kept.
fn prune_local(s: &Settings, k: u64) {
    let partners = placement::partners(&s.nodes);
    let mut names = vec![image_name(s.me), parity_name(s.me)];
    names.extend(
        partner::kept_by(&partners, s.me)
            .into_iter()
            .map(partner_copy_name),
    );
    // The newest `keep` epochs, and those their images apply to.
    let Ok(kept) = s.dir.kept(s.keep, &[]) else {
        return;
    };
    let _ = s.local.prune(s.node(), &names, k, &kept);
}
