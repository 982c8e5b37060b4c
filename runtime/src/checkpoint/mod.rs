//! `MPIX_Checkpoint` / `Communicator::checkpoint` for the ranks of this process
//! (DESIGN.md section 7, seed 002 section 5.3).
//!
//! Every rank of the world enters; the last to arrive is the leader and, while
//! the others wait in the barrier, forks the image writer (the application stalls
//! only for that). Ranks then go on; a background thread waits for the writer,
//! commits the epoch (manifest, rename, `latest`), prunes to `--keep` and prints
//! one progress line. The next checkpoint, and the end of the job, first wait for
//! the previous commit, so epochs commit in order and none is lost at exit.
//!
//! Without `mpcrs-run --checkpoint DIR` the call only synchronizes and returns
//! `Ignore`. A process restored from an image (`mpcrs-run --restart DIR`)
//! resumes inside the leader's snapshot, and every rank returns `Restart`.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mpcrs_scheduler::futex;

use mpcrs_cr::{start_dump, CheckpointDir, Snapshot};
use mpcrs_settings::size::SizeOrAuto;

use mpcrs_settings::variables as env;

mod across;
mod helpers;
mod interval;
pub(crate) mod network;
mod post;

pub(crate) use helpers::{at_work as helpers_at_work, set_scheduler, set_transports, Stream};

/// How helpers of the storage levels do I/O (see helpers.rs).
pub(crate) fn helper_io() -> impl mpcrs_levels::Io {
    helpers::HelperIo
}

/// What `MPIX_Checkpoint` reports to each rank (values of mpi.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum CrState {
    /// The checkpoint could not be taken; the job goes on and the previous
    /// epoch stays the restart point.
    Error = -1,
    Checkpoint = 0,
    Restart = 1,
    /// Checkpointing is not enabled for this job.
    Ignore = 2,
}

/// Where the checkpoints of one stream go and how their levels are made.
pub(crate) struct Settings {
    /// The global directory (L4; epochs commit there).
    pub(crate) dir: CheckpointDir,
    pub(crate) keep: usize,
    /// Node-local storage (L1), this process's index in the job, the node of
    /// every process and the host of every node.
    pub(crate) local: mpcrs_levels::store::LocalStore,
    pub(crate) me: usize,
    /// The job's key (MPCRS_JOB_KEY; 0 when the launcher gave none).
    pub(crate) job: u64,
    pub(crate) nodes: Vec<u32>,
    pub(crate) node_names: Vec<String>,
    /// Which levels each epoch gets (images; the application names the level
    /// of each of its checkpoints), and the size of L3's groups.
    pub(crate) schedule: mpcrs_levels::Schedule,
    pub(crate) group_size: usize,
    /// `--post-processing inline`: a checkpoint returns once its levels are
    /// made.
    pub(crate) inline: bool,
    /// Whose checkpoints these are (for the helpers' transport).
    pub(crate) stream: Stream,
    /// Images in a chain, a full one then incremental ones (1: every image
    /// full, and writes are not tracked).
    pub(crate) full_every: u32,
    /// `--compress`: what images store is compressed.
    pub(crate) compression: Option<mpcrs_cr::Compression>,
    /// `--checkpoint-staging`: memory kept for copying rewritten memory in
    /// the stall, and how many processes of the job share this host's.
    pub(crate) staging: SizeOrAuto,
    pub(crate) neighbours: usize,
    /// This process holds the job's claim on the directory: process 0 of a
    /// job another launcher started (mpcrs-run holds it otherwise).
    pub(crate) claims_dir: bool,
}

impl Settings {
    /// This process's node.
    pub(crate) fn node(&self) -> u32 {
        self.nodes[self.me]
    }

    /// Where this process's L1 image of epoch `k` goes (its directory made).
    fn l1_image(&self, k: u64) -> std::io::Result<std::path::PathBuf> {
        let dir = self.local.epoch_dir(self.node(), k);
        mpcrs_cr::commit::private_dir_all(&dir)?;
        Ok(self.local.image(self.node(), k, self.me))
    }

    /// How the image of epoch `k` is taken: incremental where it can be,
    /// compressed if asked.
    fn dump_options(&self, k: u64) -> mpcrs_cr::DumpOptions {
        mpcrs_cr::DumpOptions {
            incremental: (self.full_every > 1).then_some(mpcrs_cr::Incremental {
                epoch: k,
                full_every: self.full_every,
            }),
            compression: self.compression,
            staging: self.staging_bytes(),
            owner: (self.job != 0).then_some(mpcrs_cr::image::Owner {
                job: self.job,
                epoch: k,
                process: self.me as u32,
            }),
        }
    }

    /// The memory a snapshot may copy into in its stall: as asked, or half
    /// of what is available now (what staging holds counts as available),
    /// shared with the host's other processes.
    fn staging_bytes(&self) -> u64 {
        match self.staging {
            SizeOrAuto::Off => 0,
            SizeOrAuto::Bytes(b) => b,
            SizeOrAuto::Auto => {
                (available_memory() + mpcrs_cr::staging_held()) / 2 / self.neighbours.max(1) as u64
            }
        }
    }

    /// The epochs the images of an epoch need, its processes' images
    /// applying to `parents`: those and what they need in turn, oldest first.
    fn base_of(&self, parents: &[u64]) -> Vec<u64> {
        let mut base: Vec<u64> = Vec::new();
        for &p in parents.iter().filter(|&&p| p != 0) {
            base.push(p);
            if let Ok(m) = mpcrs_settings::JobManifest::read(
                &self.dir.epoch_dir(p).join(mpcrs_cr::commit::MANIFEST),
            ) {
                base.extend(m.base);
            }
        }
        base.sort_unstable();
        base.dedup();
        base
    }

    /// The manifest of epoch `k` of a job of `ranks` ranks in `processes`.
    fn manifest(&self, k: u64, ranks: usize, processes: usize) -> mpcrs_settings::JobManifest {
        let hosts = self
            .nodes
            .iter()
            .map(|&n| self.node_names[n as usize].clone())
            .collect();
        let mut m = mpcrs_settings::JobManifest::of_this_job(ranks, processes, hosts);
        m.local = Some(self.local.root().to_path_buf());
        m.dir = Some(self.dir.root().to_path_buf());
        m.job = (self.job != 0).then_some(self.job);
        m.nodes = self.nodes.clone();
        m.levels = self
            .schedule
            .levels_of(k)
            .iter()
            .map(|l| l.number())
            .collect();
        m.complete = vec![mpcrs_levels::Level::Local.number()];
        m.group_size = self.group_size;
        m
    }

    /// After epoch `k` committed at L1: helpers make its other levels.
    fn post_process(&'static self, k: u64) {
        post::start(self, k, self.schedule.levels_of(k));
    }

    /// After epoch `k` of the application's data committed at L1: helpers make
    /// the levels up to `planned` (its other levels).
    pub(crate) fn post_process_levels(&'static self, k: u64, planned: Vec<mpcrs_levels::Level>) {
        post::start(self, k, planned);
    }
}

/// The settings of the levels from the environment (see the variables).
/// `hosts`: the number of hosts of the job (for the default schedule).
fn level_settings(
    hosts: usize,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(mpcrs_levels::Schedule, usize, bool), String> {
    let schedule = match var(env::CHECKPOINT_LEVELS.name) {
        Some(v) => v
            .parse::<mpcrs_levels::Schedule>()
            .map_err(|e| format!("{}={v:?}: {e}", env::CHECKPOINT_LEVELS.name))?,
        None => mpcrs_levels::Schedule::default_for(hosts),
    };
    let group_size = match var(env::CHECKPOINT_GROUP_SIZE.name) {
        Some(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&g| g >= 2)
            .ok_or_else(|| {
                format!(
                    "{}={v:?} is not a group size of 2 or more",
                    env::CHECKPOINT_GROUP_SIZE.name
                )
            })?,
        None => 4,
    };
    let inline = match var(env::POST_PROCESSING.name).as_deref().map(str::trim) {
        None | Some("helpers") => false,
        Some("inline") => true,
        Some(v) => {
            return Err(format!(
                "{}={v:?} is neither helpers nor inline",
                env::POST_PROCESSING.name
            ))
        }
    };
    Ok((schedule, group_size, inline))
}

/// Whether this job may take checkpoints (it was given a checkpoint directory).
pub(crate) fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os(env::CHECKPOINT_DIR.name).is_some())
}

/// The settings of the checkpoints: made on first use from the environment,
/// and again from the restorer's when the process is restored (a restart
/// may name another checkpoint directory, a copy of the first, or other
/// hosts). Each is leaked: checkpoints hold `&'static` references.
static SETTINGS: AtomicPtr<Option<Result<Settings, String>>> = AtomicPtr::new(std::ptr::null_mut());

fn settings() -> Option<&'static Result<Settings, String>> {
    let mut current = SETTINGS.load(Ordering::Acquire);
    if current.is_null() {
        let made = Box::into_raw(Box::new(settings_from(&|k| std::env::var(k).ok())));
        current = match SETTINGS.compare_exchange(
            std::ptr::null_mut(),
            made,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => made,
            Err(first) => {
                // SAFETY: `made` was never published.
                drop(unsafe { Box::from_raw(made) });
                first
            }
        };
    }
    // SAFETY: published settings are never freed.
    unsafe { &*current }.as_ref()
}

/// In a process just restored: the settings of the run that restored it.
fn reload_settings_after_restore() {
    let Some(handed) = mpcrs_cr::restore::handed_over_environment() else {
        return;
    };
    let var = |k: &str| {
        handed
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.clone())
    };
    let made = Box::into_raw(Box::new(settings_from(&var)));
    // The previous ones stay allocated: references to them may live on.
    SETTINGS.store(made, Ordering::Release);
    // SAFETY: published settings are never freed.
    if let Some(Ok(s)) = unsafe { &*made } {
        claim_directory(s);
    }
}

/// The claim on the checkpoint directory, where this process holds it (see
/// [`Settings::claims_dir`]). A restored process takes it again: the image's
/// descriptor holds no lock.
static CLAIM: Mutex<Option<mpcrs_cr::claim::Claim>> = Mutex::new(None);

/// Claims the directory of `settings` if this process holds the job's
/// claim; a directory another job is checkpointing into ends this one.
fn claim_directory(settings: &Settings) {
    if !settings.claims_dir {
        return;
    }
    let holder = format!(
        "process 0 of a job started by another launcher, pid {} on {}",
        std::process::id(),
        mpcrs_settings::local_hostname()
    );
    let mut claim = CLAIM.lock().unwrap_or_else(|e| e.into_inner());
    *claim = None;
    match mpcrs_cr::claim::claim(settings.dir.root(), &holder) {
        Ok(c) => *claim = Some(c),
        Err(e) => {
            mpcrs_settings::report!(
                error,
                "mpcrs: {} {}: {e}",
                env::CHECKPOINT_DIR.name,
                settings.dir.root().display()
            );
            crate::process::abort_job(2)
        }
    }
}

/// The settings the variables of `var` give; `None` without a checkpoint
/// directory.
fn settings_from(var: &dyn Fn(&str) -> Option<String>) -> Option<Result<Settings, String>> {
    let dir = var(env::CHECKPOINT_DIR.name)?;
    let keep = match var(env::CHECKPOINT_KEEP.name) {
        Some(k) => match k.parse::<usize>() {
            Ok(k) if k > 0 => k,
            _ => {
                return Some(Err(format!(
                    "{}={k:?} is not a positive integer",
                    env::CHECKPOINT_KEEP.name
                )))
            }
        },
        None => 2,
    };
    let job = match var(env::JOB_KEY.name) {
        None => 0,
        Some(k) => match u64::from_str_radix(k.trim(), 16) {
            Ok(k) => k,
            Err(_) => {
                return Some(Err(format!(
                    "{}={k:?} is not a job key (hexadecimal)",
                    env::JOB_KEY.name
                )))
            }
        },
    };
    let cfg = match crate::config::JobConfig::from_variables(var) {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let local = match var(env::CHECKPOINT_LOCAL.name) {
        Some(l) => std::path::PathBuf::from(l),
        None => mpcrs_levels::store::default_local_root(std::path::Path::new(&dir)),
    };
    let hosts = {
        let mut n = cfg.nodes.clone();
        n.sort_unstable();
        n.dedup();
        n.len()
    };
    let (schedule, group_size, inline) = match level_settings(hosts, var) {
        Ok(l) => l,
        Err(e) => return Some(Err(e)),
    };
    let full_every = match var(env::FULL_EVERY.name) {
        None => 8,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Some(Err(format!(
                    "{}={v:?} is not a number of images of 1 or more",
                    env::FULL_EVERY.name
                )))
            }
        },
    };
    let compression = match var(env::COMPRESS.name) {
        None => None,
        Some(v) => match mpcrs_cr::Compression::parse(v.trim()) {
            Ok(c) => c,
            Err(e) => return Some(Err(format!("{}: {e}", env::COMPRESS.name))),
        },
    };
    let staging = match var(env::CHECKPOINT_STAGING.name)
        .as_deref()
        .map(SizeOrAuto::parse)
    {
        None => SizeOrAuto::Auto,
        Some(Ok(s)) => s,
        Some(Err(e)) => return Some(Err(format!("{}: {e}", env::CHECKPOINT_STAGING.name))),
    };
    let here = cfg.nodes.get(cfg.process).copied();
    let neighbours = cfg.nodes.iter().filter(|&&n| Some(n) == here).count();
    Some(
        CheckpointDir::create(std::path::Path::new(&dir))
            .map(|dir| Settings {
                dir,
                keep,
                local: mpcrs_levels::store::LocalStore::new(local),
                me: cfg.process,
                job,
                nodes: cfg.nodes.clone(),
                node_names: cfg.node_names.clone(),
                schedule,
                group_size,
                inline,
                stream: Stream::Images,
                full_every,
                compression,
                staging,
                neighbours,
                claims_dir: cfg.foreign_launcher && cfg.process == 0,
            })
            .map_err(|e| format!("checkpoint directory {dir}: {e}")),
    )
}

/// Memory available to programs on this host (MemAvailable), 0 if unknown.
fn available_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib << 10)
}

/// One checkpoint at a time: MPIX_Checkpoint's leader or the request thread.
static TAKING: Mutex<()> = Mutex::new(());

/// The commit of the last checkpoint, while it runs.
static PENDING: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);
/// The leader's outcome, read by every rank after the barrier.
static OUTCOME: AtomicI32 = AtomicI32::new(CrState::Ignore as i32);

/// Waits for the helpers under way (the application's checkpoints, whose next
/// one needs the last one's levels made, as FTI's head does).
pub(crate) fn drain_helpers() {
    helpers::drain();
}

/// Starts `work` as a helper task that the end of the process waits for.
pub(crate) fn start_helper(work: impl FnOnce() + Send + 'static) {
    helpers::start(work)
}

/// Waits for the commit of the last checkpoint (at the next one, and at exit).
pub fn finish() {
    wait_for_commit();
    // The commit started the post-processing of its epoch: done before the
    // process exits.
    helpers::drain();
}

/// Before a checkpoint: waits for the commit of the last one, and stops its
/// post-processing (that epoch stays usable from node-local storage).
fn finish_before_checkpoint() {
    let started = Instant::now();
    wait_for_commit();
    let committed = started.elapsed();
    helpers::stop();
    tracing::debug!(
        commit_ms = committed.as_secs_f64() * 1e3,
        helpers_ms = (started.elapsed() - committed).as_secs_f64() * 1e3,
        "waited for the last checkpoint"
    );
}

fn wait_for_commit() {
    if let Some(h) = PENDING.lock().unwrap().take() {
        let _ = h.join();
    }
}

/// Threads of this process that mpcrs did not start (its own are named
/// `mpcrs-*`; the main thread waits for the ranks): their state cannot be saved.
fn foreign_threads() -> Vec<String> {
    let me = std::process::id().to_string();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| {
            let tid = t.file_name().to_string_lossy().into_owned();
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            let comm = comm.trim();
            (tid != me && !comm.starts_with("mpcrs-")).then(|| format!("{tid} ({comm})"))
        })
        .collect()
}

/// How long a thread just started by mpcrs may take to name itself (a new thread
/// carries its creator's name until it runs; on a loaded machine that can take a
/// while).
const THREAD_NAMING: Duration = Duration::from_millis(500);

/// [`foreign_threads`], once threads still carrying an inherited name had the
/// time to take their own.
fn settled_foreign_threads() -> Vec<String> {
    let deadline = Instant::now() + THREAD_NAMING;
    loop {
        let foreign = foreign_threads();
        if foreign.is_empty() || Instant::now() >= deadline {
            return foreign;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether the program's own threads forbid a checkpoint (saying why, after
/// `who`).
fn refused_here(who: &str, requested: bool) -> bool {
    let foreign = settled_foreign_threads();
    if !foreign.is_empty() {
        mpcrs_settings::report!(
            warn,
            "mpcrs: {who}checkpoint refused: the program runs threads of its own ({}), whose \
             state an image cannot hold; join them before MPIX_Checkpoint. The job goes on \
             and the previous epoch stays the restart point.",
            foreign.join(", ")
        );
        return true;
    }
    let vetoes: Vec<Veto> = VETOES.lock().unwrap().clone();
    for veto in vetoes {
        if let Some(why) = veto(requested) {
            mpcrs_settings::report!(
                warn,
                "mpcrs: {who}checkpoint refused: {why}. The job goes on and the previous epoch \
                 stays the restart point."
            );
            return true;
        }
    }
    false
}

/// What another part of the runtime says against a checkpoint now, if
/// anything (state an image cannot hold); told whether the checkpoint was
/// asked from outside (the ranks run on meanwhile) or by MPIX_Checkpoint.
pub(crate) type Veto = fn(requested: bool) -> Option<String>;

static VETOES: Mutex<Vec<Veto>> = Mutex::new(Vec::new());

/// Adds `veto` to what is asked before every checkpoint of this process.
pub(crate) fn register_veto(veto: Veto) {
    let mut v = VETOES.lock().unwrap();
    if !v.contains(&veto) {
        v.push(veto);
    }
}

/// The steps of a restored process's return that other parts of the runtime
/// take part in, in order, each between two barriers of the job: state
/// shared between processes (memory of a node) made again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rebuild {
    /// Make what others will open.
    Make,
    /// Open what others made.
    Open,
    /// Every process opened it: names may go.
    Settle,
}

/// What a restored process runs in each [`Rebuild`] step.
pub(crate) type RebuildHook = fn(Rebuild);

static REBUILD_HOOKS: Mutex<Vec<RebuildHook>> = Mutex::new(Vec::new());

/// Adds `hook` to the steps of every later restore of this process.
pub(crate) fn register_rebuild(hook: RebuildHook) {
    let mut v = REBUILD_HOOKS.lock().unwrap();
    if !v.contains(&hook) {
        v.push(hook);
    }
}

fn rebuild(step: Rebuild) {
    let hooks: Vec<RebuildHook> = REBUILD_HOOKS.lock().unwrap().clone();
    for h in hooks {
        h(step);
    }
}

/// Output buffered in the program must not be written again by a restored
/// process: flushed into the pipes before the snapshot.
fn flush_output() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // SAFETY: fflush(NULL) flushes every C stdio stream of this process.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// The leader's part: fork the writer and hand the commit to a thread.
fn take(settings: &'static Settings, ranks: usize) -> CrState {
    let _one = TAKING.lock().unwrap_or_else(|e| e.into_inner());
    finish_before_checkpoint();
    if refused_here("", false) {
        return CrState::Error;
    }
    let dir = &settings.dir;
    let epoch = match dir.next_epoch().and_then(|k| dir.begin(k)) {
        Ok(e) => e,
        Err(e) => {
            mpcrs_settings::report!(
                error,
                "mpcrs: checkpoint failed: {}: {e}",
                dir.root().display()
            );
            return CrState::Error;
        }
    };
    let image = match settings.l1_image(epoch.epoch()) {
        Ok(i) => i,
        Err(e) => {
            mpcrs_settings::report!(
                error,
                "mpcrs: checkpoint failed: node-local storage {}: {e}",
                settings.local.root().display()
            );
            return CrState::Error;
        }
    };
    flush_output();
    let dump = match start_dump(&image, settings.dump_options(epoch.epoch())) {
        Ok(Snapshot::Writing(d)) => d,
        Ok(Snapshot::Restored) => {
            reload_settings_after_restore();
            return CrState::Restart;
        }
        Err(e) => {
            mpcrs_settings::report!(
                error,
                "mpcrs: checkpoint epoch {} failed: {e}",
                epoch.epoch()
            );
            return CrState::Error;
        }
    };
    let started = spawn_commit(move || {
        let k = epoch.epoch();
        match dump.wait() {
            Ok(report) => {
                let parents = [report.parent.map_or(0, |p| p.epoch)];
                let committed =
                    commit_epoch(epoch, ranks, settings, &Figures::of(&report, 1), &parents);
                mpcrs_cr::incremental::settle(k, committed.then_some(report.meta_crc));
                if committed {
                    settings.post_process(k);
                }
            }
            Err(e) => {
                mpcrs_cr::incremental::settle(k, None);
                mpcrs_settings::report!(
                    error,
                    "mpcrs: checkpoint epoch {k} failed, the previous one stays: {e}"
                )
            }
        }
    });
    match started {
        Ok(()) => CrState::Checkpoint,
        Err(e) => {
            mpcrs_settings::report!(
                error,
                "mpcrs: checkpoint: cannot start the commit thread: {e}"
            );
            CrState::Error
        }
    }
}

/// What a checkpoint of the job took, over its images.
struct Figures {
    images: usize,
    bytes: u64,
    stored: u64,
    /// The longest write of an image.
    write: Duration,
    /// What it cost the program (the longest stall among them), as the
    /// manifest records it.
    cost: mpcrs_settings::manifest::CheckpointCost,
}

impl Figures {
    fn of(r: &mpcrs_cr::DumpReport, images: usize) -> Figures {
        Figures {
            images,
            bytes: r.bytes,
            stored: r.stored_bytes,
            write: r.write,
            cost: mpcrs_settings::manifest::CheckpointCost {
                stall_us: r.stall.as_micros() as u64,
                lost_us: r.cost.lost().as_micros() as u64,
                faults: r.cost.faults,
                staged: r.cost.staged_bytes,
            },
        }
    }

    fn stall(&self) -> Duration {
        Duration::from_micros(self.cost.stall_us)
    }
}

/// Starts the thread that commits the checkpoint just taken; the next
/// checkpoint and the end of the job wait for it ([`finish`]).
fn spawn_commit(commit: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let h = std::thread::Builder::new()
        .name("mpcrs-ckpt-commit".into())
        .spawn(commit)?;
    *PENDING.lock().unwrap() = Some(h);
    Ok(())
}

/// Commits `epoch`, every image of which is durable (manifest of `ranks` in
/// `figures.images` processes, rename, `latest`), prunes to `keep` epochs and
/// prints the checkpoint's progress line.
fn commit_epoch(
    epoch: mpcrs_cr::PendingEpoch,
    ranks: usize,
    settings: &Settings,
    f: &Figures,
    parents: &[u64],
) -> bool {
    let k = epoch.epoch();
    let mut manifest = settings.manifest(k, ranks, f.images);
    manifest.base = settings.base_of(parents);
    manifest.cost = Some(f.cost);
    if let Err(e) = epoch.commit(manifest.to_json().as_bytes()) {
        mpcrs_settings::report!(
            error,
            "mpcrs: checkpoint epoch {k} not committed, the previous one stays: {e}"
        );
        return false;
    }
    post::prune_global(settings);
    let images = if f.images > 1 {
        format!(" in {} images", f.images)
    } else {
        String::new()
    };
    interval::measured(f.stall(), f.write);
    mpcrs_settings::report!(info,
        "mpcrs: checkpoint epoch {k}: {} bytes ({} stored){images}, application stall {:.1} ms, write {:.0} MB/s, {}",
        f.bytes,
        f.stored,
        f.stall().as_secs_f64() * 1e3,
        f.stored as f64 / 1e6 / f.write.as_secs_f64().max(1e-6),
        f.cost.describe()
    );
    true
}

/// The leader's part of `MPIX_Checkpoint`, called by the last rank of this
/// process to arrive while the others wait (`Communicator::checkpoint`): takes
/// the checkpoint of a job of `ranks` ranks, in this process alone or, when the
/// world `spans` processes, with the other processes' leaders.
pub(crate) fn lead(ranks: usize, spans: bool) {
    let state = match settings() {
        None => CrState::Ignore,
        Some(Ok(s)) => {
            let state = if spans {
                across::take(s, ranks)
            } else {
                take(s, ranks)
            };
            if s.inline && state == CrState::Checkpoint {
                // The ranks wait in the call until every level is made.
                finish();
            }
            state
        }
        Some(Err(e)) => {
            mpcrs_settings::report!(error, "mpcrs: checkpoint failed: {e}");
            CrState::Error
        }
    };
    OUTCOME.store(state as i32, Ordering::Release);
}

/// What the leader's part came to, for every rank of this process once the
/// leader is done.
pub(crate) fn outcome() -> CrState {
    match OUTCOME.load(Ordering::Acquire) {
        0 => CrState::Checkpoint,
        1 => CrState::Restart,
        2 => CrState::Ignore,
        _ => CrState::Error,
    }
}

/// Set once the ranks of this process are done: no checkpoint is taken after
/// (an image must find them running).
static RANKS_DONE: AtomicBool = AtomicBool::new(false);

/// The ranks of this process are done: waits for a checkpoint under way, and
/// refuses any later one.
pub fn ranks_done() {
    let _one = TAKING.lock().unwrap_or_else(|e| e.into_inner());
    RANKS_DONE.store(true, Ordering::Release);
}

/// Futex word of the request thread: what it is asked (bits).
static REQUEST: AtomicU32 = AtomicU32::new(0);
/// SIGUSR1.
const SIGNALLED: u32 = 1;
/// Process 0 started a checkpoint of the job.
const BY_COORDINATOR: u32 = 2;
const STOP: u32 = 4;

fn ask(bit: u32) {
    REQUEST.fetch_or(bit, Ordering::AcqRel);
    futex::wake_one(&REQUEST);
}

extern "C" fn on_checkpoint_signal(_sig: libc::c_int) {
    ask(SIGNALLED);
}

/// A coordination message arrived (called by network progress): a `START`
/// from process 0 wakes the request thread.
pub(crate) fn on_network_message(_sequence: u64, step: u8) {
    if step == across::step::START {
        ask(BY_COORDINATOR);
    }
}

/// The thread that takes checkpoints asked from outside the program: SIGUSR1
/// (sent by `mpcrs-run` when it gets one) and `--checkpoint-interval`. It stops
/// and is joined when dropped.
pub struct RequestServer(Option<JoinHandle<()>>);

impl Drop for RequestServer {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            ask(STOP);
            let _ = h.join();
        }
    }
}

/// Starts the request thread of a job with checkpoints (none otherwise).
///
/// A snapshot of one process is consistent wherever its ranks are: they share
/// its memory and every thread is stopped at a signal frame, so the checkpoint
/// is taken at once; ranks go on without noticing, and after a restart resume
/// where they were. In a job of several processes, process 0's request thread
/// starts the checkpoint in every process; the network's gate keeps ranks from
/// sending between the drain and the snapshots (see [`across`]). The server of
/// such a job must outlive the job's final fence: another process may ask until
/// then.
pub fn serve_requests(ranks: usize) -> RequestServer {
    let Some(Ok(settings)) = settings() else {
        return RequestServer(None);
    };
    claim_directory(settings);
    let nodes = {
        let mut n = settings.nodes.clone();
        n.sort_unstable();
        n.dedup();
        n.len()
    };
    let interval = interval::Interval::parse(
        env::CHECKPOINT_INTERVAL.get().as_deref(),
        env::MTBF.get().as_deref(),
        nodes,
    );
    // The next checkpoint's time; `auto` says its interval when it changes.
    let mut said: Option<Duration> = None;
    let mut next_time = move || {
        let i = interval?;
        let d = i.next(interval::last_cost());
        if let interval::Interval::Auto { mtbf } = i {
            let changed = said.is_none_or(|s| d.abs_diff(s) * 10 > s);
            if changed && network::get().is_none_or(|n| n.me() == 0) {
                let cost = interval::last_cost().map_or("not measured yet".into(), |c| {
                    format!("{:.3} s", c.as_secs_f64())
                });
                mpcrs_settings::report!(
                    info,
                    "mpcrs: checkpoint interval {:.1} s (auto: checkpoints cost {cost}, MTBF {:.0} s)",
                    d.as_secs_f64(),
                    mtbf.as_secs_f64()
                );
                said = Some(d);
            }
        }
        Instant::now().checked_add(d)
    };
    // SAFETY: the handler only touches an atomic and makes a futex call.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_checkpoint_signal as *const () as usize;
        act.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(libc::SIGUSR1, &act, std::ptr::null_mut());
    }
    let thread = std::thread::Builder::new()
        .name("mpcrs-ckpt-request".into())
        .spawn(move || {
            mpcrs_cr::dump::prepare();
            let mut next = next_time();
            loop {
                let timeout = next.map(|t| t.saturating_duration_since(Instant::now()));
                futex::wait(&REQUEST, 0, timeout);
                let asked = REQUEST.swap(0, Ordering::AcqRel);
                if asked & STOP != 0 {
                    return;
                }
                let why = if asked & SIGNALLED != 0 {
                    Some("SIGUSR1")
                } else if next.is_some_and(|t| Instant::now() >= t) {
                    Some("--checkpoint-interval")
                } else {
                    None
                };
                let state = match network::get() {
                    None => why.map(|_| take(settings, ranks)),
                    Some(network) => {
                        if asked & BY_COORDINATOR != 0 {
                            while let Some(sequence) = across::take_start(network) {
                                across::answer(settings, sequence);
                            }
                        }
                        // Only process 0 starts one; the launcher signals every process.
                        match why {
                            Some(why) if network.me() == 0 => across::request(settings).or_else(|| {
                                mpcrs_settings::report!(warn,
                                    "mpcrs: checkpoint on {why} skipped: another is under way, or the ranks are done"
                                );
                                None
                            }),
                            _ => None,
                        }
                    }
                };
                if settings.inline && state == Some(CrState::Checkpoint) {
                    finish();
                }
                match (state, why) {
                    (Some(CrState::Restart), Some(why)) => {
                        mpcrs_settings::report!(info, "mpcrs: restarted from a checkpoint taken on {why}")
                    }
                    (Some(CrState::Checkpoint), Some(why)) => {
                        mpcrs_settings::report!(info, "mpcrs: checkpoint taken on {why}")
                    }
                    _ => {}
                }
                if why.is_some() {
                    next = next_time();
                }
            }
        });
    match thread {
        Ok(h) => RequestServer(Some(h)),
        Err(e) => {
            mpcrs_settings::report!(
                warn,
                "mpcrs: checkpoints on request are off: cannot start their thread: {e}"
            );
            RequestServer(None)
        }
    }
}
