//! Starting a job in this process: read the launcher's settings, start the
//! scheduler, run every rank as a ULT, and turn the ranks' results into the
//! process's exit status.

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::{Arc, Once};

use mpcrs_scheduler::Scheduler;

use crate::comm::{CommShared, Communicator};
use crate::group::Group;
use crate::process::{abort_job, current_rank, set_current_rank};
use crate::universe::{worker_of_rank, Universe};

pub use crate::config::JobConfig;
/// The variables through which mpcrs-run configures the job's processes.
pub use mpcrs_settings::variables as env;

/// Exit status of a job in which a rank panicked.
pub const PANIC_EXIT_CODE: i32 = 101;

/// What a rank's function may return: its exit status.
pub trait RankExit {
    fn exit_code(self, rank: i32) -> i32;
}

impl RankExit for () {
    fn exit_code(self, _rank: i32) -> i32 {
        0
    }
}

impl RankExit for i32 {
    fn exit_code(self, _rank: i32) -> i32 {
        self
    }
}

impl<T: RankExit, E: Display> RankExit for Result<T, E> {
    fn exit_code(self, rank: i32) -> i32 {
        match self {
            Ok(v) => v.exit_code(rank),
            Err(e) => {
                mpcrs_settings::report!(error, "mpcrs: rank {rank} failed: {e}");
                1
            }
        }
    }
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| match current_rank() {
            Some(rank) => {
                let msg = mpcrs_scheduler::panic_message(info.payload())
                    .unwrap_or_else(|| "(non-string panic payload)".into());
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                mpcrs_settings::report!(error, "mpcrs: rank {rank} panicked{at}: {msg}");
            }
            None => default(info),
        }));
    });
}

/// This process's part of a job, before its ranks run.
struct Started {
    sched: Scheduler,
    fabric: Option<&'static crate::remote::Fabric>,
    /// What the world communicator's ranks of this process share.
    world: Arc<CommShared>,
}

/// Starts the workers and, in a job of several processes, joins the network;
/// `None` after saying why it could not.
fn start(cfg: &JobConfig) -> Option<Started> {
    install_panic_hook();
    mpcrs_scheduler::set_ult_label(|word, out| match crate::process::rank_of_ult_word(word) {
        Some(rank) => write!(out, "rank {rank}"),
        None => out.write_str("a helper task"),
    });
    mpcrs_settings::diagnostics::init("mpcrs");
    mpcrs_settings::diagnostics::set_rank_source(|| current_rank().map(|r| r as usize));
    tracing::debug!(
        ranks = cfg.ranks,
        processes = cfg.processes,
        local_ranks = ?cfg.local_ranks(),
        workers = ?cfg.workers,
        stack_size = cfg.stack_size,
        "starting the process's ranks"
    );
    let mut builder = Scheduler::builder().stack_size(cfg.stack_size);
    if let Some(w) = cfg.workers {
        builder = builder.workers(w);
    }
    if let Some(y) = cfg.yield_when_idle {
        builder = builder.yield_when_idle(y);
    }
    if let Some(g) = cfg.stack_guards {
        builder = builder.stack_guards(g);
    }
    match cfg.binding {
        Some(b) => builder = builder.bind(b),
        None if cfg.unpinned => builder = builder.pin(false),
        None => {}
    }
    let sched = match builder.build() {
        Ok(s) => s,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs: cannot start worker threads: {e}");
            return None;
        }
    };
    if cfg.report_bindings {
        crate::bindings::report(cfg);
    }
    let n = cfg.ranks;
    let handle = sched.handle();
    // Helpers of the storage levels run on the ranks' workers.
    crate::checkpoint::set_scheduler(handle.clone());
    let fabric = if cfg.processes > 1 {
        match crate::remote::Fabric::start(cfg, &handle, crate::checkpoint::on_network_message) {
            Ok(f) => {
                // Checkpoint coordination reaches the fabric through this
                // interface only.
                crate::checkpoint::network::set(f);
                Some(f)
            }
            Err(e) => {
                mpcrs_settings::report!(
                    error,
                    "mpcrs: process {} cannot join the job: {e}",
                    cfg.process
                );
                return None;
            }
        }
    } else {
        None
    };
    // MPI_Wtime's counter calibrates while the job starts.
    crate::clock::wtime();
    crate::waits::install(cfg.local_ranks());
    crate::deadlock::detector::start(cfg.process, cfg.processes, cfg.deadlock_check);
    let universe = Arc::new(Universe::new());
    let world = new_world(&universe, fabric, n);
    if fabric.is_some() {
        // Partner copies (L2) and parity (L3) travel between the processes'
        // helpers, apart for images and for the application's data.
        use crate::process_transport::ProcessTransport;
        crate::checkpoint::set_transports([
            Box::new(ProcessTransport::of_universe(
                &universe,
                crate::checkpoint::Stream::Images,
            )),
            Box::new(ProcessTransport::of_universe(
                &universe,
                crate::checkpoint::Stream::Application,
            )),
        ]);
    }
    Some(Started {
        sched,
        fabric,
        world,
    })
}

/// The world communicator of a run of the job, as this process's ranks share
/// it.
fn new_world(
    universe: &Arc<Universe>,
    fabric: Option<&'static crate::remote::Fabric>,
    n: usize,
) -> Arc<CommShared> {
    let make_world = || {
        CommShared::new(
            universe.clone(),
            0,
            Group::from_world_ranks((0..n as i32).collect()),
        )
    };
    match fabric {
        Some(f) => f.registry.get_or_make(0, 1, make_world),
        None => make_world(),
    }
}

/// Arms recovery in place (`--recover in-place`): a new run joins its
/// network and starts from a fresh universe and world.
fn arm_recovery(cfg: &JobConfig, fabric: Option<&'static crate::remote::Fabric>) -> bool {
    let Some(f) = fabric else {
        mpcrs_settings::report!(
            error,
            "mpcrs: --recover in-place needs a job of several processes (-p 2 or more)"
        );
        return false;
    };
    let n = cfg.ranks;
    let rebuild: crate::recovery::Rebuild = Box::new(move |var, run| {
        let cfg = JobConfig::from_variables(var)?;
        f.start_run(&cfg, var, run)?;
        Ok(new_world(&Arc::new(Universe::new()), Some(f), n))
    });
    match crate::recovery::arm(cfg.process, cfg.local_ranks(), cfg.run, rebuild) {
        Ok(()) => true,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs: process {}: {e}", cfg.process);
            false
        }
    }
}

/// The runtime of a process whose one rank is the program's own thread.
static ADOPTED: std::sync::Mutex<Option<Started>> = std::sync::Mutex::new(None);

/// Starts this process's part of the job with the calling OS thread as its one
/// rank (a C program started directly rather than through mpcrs-exec: its
/// `MPI_Init`), and returns that rank's `MPI_COMM_WORLD`. The rank waits as an
/// OS thread where a ULT would yield, polling the network itself for a while
/// before it sleeps; the workers drive it too.
pub fn adopt_calling_thread(cfg: &JobConfig) -> std::result::Result<Communicator, String> {
    let local = cfg.local_ranks();
    if local.len() != 1 {
        return Err(format!(
            "a program started directly is one rank, but this process has {} (ranks {}..{})",
            local.len(),
            local.start,
            local.end
        ));
    }
    let started = start(cfg).ok_or("cannot start the runtime")?;
    let rank = local.start as i32;
    set_current_rank(rank);
    mpcrs_scheduler::poll_while_parked(true);
    let comm = Communicator::from_shared(started.world.clone(), rank, rank, "MPI_COMM_WORLD");
    *ADOPTED.lock().unwrap() = Some(started);
    Ok(comm)
}

/// The workers of a process whose rank is the program's own thread.
pub(crate) fn adopted_scheduler() -> Option<mpcrs_scheduler::Handle> {
    ADOPTED.lock().unwrap().as_ref().map(|s| s.sched.handle())
}

/// The workers of the job [`run_with`] runs in this process, and its first local
/// rank and count of local ranks: where a rank's helpers go when the caller
/// acting for it is an OS thread the rank started.
static RUNNING: std::sync::Mutex<Option<(mpcrs_scheduler::Handle, usize, usize)>> =
    std::sync::Mutex::new(None);

/// A worker of `rank`'s scheduler to run work of the rank on (its own worker
/// in a job of ULT ranks, the first for a rank that is the program's thread).
pub(crate) fn worker_for_rank(rank: i32) -> Option<(mpcrs_scheduler::Handle, usize)> {
    if let Some((h, first, count)) = RUNNING.lock().unwrap().as_ref() {
        let local = (rank as usize).checked_sub(*first)?;
        let w = worker_of_rank(local, *count, h.workers());
        return Some((h.clone(), w));
    }
    adopted_scheduler().map(|h| (h, 0))
}

/// Waits until every process of the job got to its end (this process serves the
/// others meanwhile), then prints the `--net-stats` of this process.
fn finish_fabric(f: &crate::remote::Fabric) {
    f.finish();
    if env::NET_STATS.is_set() {
        // One write, so that the lines of the job's processes do not interleave.
        let sleeps = mpcrs_scheduler::sleep_counts();
        let stats = format!(
            "{}mpcrs: net-stats process {}: collectives: {} rounds in the node's shared areas\n\
             mpcrs: net-stats process {}: bells: {} sleeps, {} ended by a ring, {} by the timeout ({} then found frames)\n",
            f.stats(),
            f.me,
            crate::coll::node::rounds(),
            f.me,
            sleeps.sleeps,
            sleeps.rung,
            sleeps.timed_out,
            sleeps.timed_out_then_moved,
        );
        use std::io::Write;
        let _ = std::io::stderr().lock().write_all(stats.as_bytes());
    }
}

/// `MPI_Finalize` of an adopted thread: this process serves the others until all
/// are done, then its workers stop.
pub fn release_calling_thread() {
    let Some(started) = ADOPTED.lock().unwrap().take() else {
        return;
    };
    // Waiting for the others to end may be long: sleep between polls.
    mpcrs_scheduler::poll_while_parked(false);
    if let Some(f) = started.fabric {
        finish_fabric(f);
    }
    started.sched.shutdown();
}

/// Runs `f` once per rank of the job, each rank a ULT with its own
/// `MPI_COMM_WORLD` handle, and returns the job's exit status. A rank that fails
/// (returns a non-zero status or an error) or panics (status 101) ends the whole
/// job at once, as a failed MPI process does under mpirun.
pub fn run<F, R>(f: F) -> ExitCode
where
    F: Fn(Communicator) -> R + Sync,
    R: RankExit,
{
    // A restarted job becomes the process of its image here, before any thread.
    crate::restore_if_asked();
    let cfg = match JobConfig::from_env() {
        Ok(c) => c,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs: bad job settings: {e}");
            return ExitCode::from(2);
        }
    };
    let code = run_with(&cfg, f);
    ExitCode::from(code.clamp(0, 255) as u8)
}

/// [`run`] with explicit settings; returns the worst rank's exit status.
pub fn run_with<F, R>(cfg: &JobConfig, f: F) -> i32
where
    F: Fn(Communicator) -> R + Sync,
    R: RankExit,
{
    let Some(Started {
        sched,
        fabric,
        world,
    }) = start(cfg)
    else {
        return 1;
    };
    if cfg.recover_in_place && !arm_recovery(cfg, fabric) {
        return 1;
    }
    let handle = sched.handle();
    let body = move |comm: Communicator| -> i32 {
        let rank = comm.world_rank();
        f(comm).exit_code(rank)
    };
    let body: &(dyn Fn(Communicator) -> i32 + Sync) = &body;
    // SAFETY: the ULTs below are the only users of `body`, and this function does
    // not return before every one of them finished: it joins them all, and a rank
    // that panics ends the process without unwinding this frame.
    let body: &'static (dyn Fn(Communicator) -> i32 + Sync) = unsafe { std::mem::transmute(body) };
    let workers = handle.workers();
    let local = cfg.local_ranks();
    let (first, count) = (local.start, local.len());
    *RUNNING.lock().unwrap() = Some((handle.clone(), first, count));
    let ranks: Vec<_> = local
        .map(|r| {
            let world = world.clone();
            handle.spawn_on(worker_of_rank(r - first, count, workers), move || {
                set_current_rank(r as i32);
                let mut world = world;
                let ended = loop {
                    let comm = Communicator::from_shared(
                        world.clone(),
                        r as i32,
                        r as i32,
                        "MPI_COMM_WORLD",
                    );
                    crate::recovery::entering_body(r);
                    let ended =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(comm)));
                    // With recovery in place, a rank that left for a new run
                    // (or ended well, when a run after it starts) runs again.
                    match crate::recovery::after_body(r, &ended) {
                        crate::recovery::After::Again(w) => world = w,
                        crate::recovery::After::Finish => break ended,
                    }
                };
                // It sends nothing more: others waiting for it wait forever.
                crate::waits::finished();
                match ended {
                    Ok(0) => 0,
                    // The other ranks may be waiting for this one: like mpirun when a
                    // process exits with an error, end the whole job.
                    Ok(code) => {
                        mpcrs_settings::report!(
                            error,
                            "mpcrs: rank {r} exited with status {code}; ending the job"
                        );
                        abort_job(code)
                    }
                    Err(_) => {
                        mpcrs_settings::report!(error, "mpcrs: rank {r} failed; ending the job");
                        abort_job(PANIC_EXIT_CODE)
                    }
                }
            })
        })
        .collect();
    drop(world);
    // Checkpoints asked from outside (SIGUSR1, --checkpoint-interval).
    let requests = crate::checkpoint::serve_requests(cfg.local_ranks().len());
    let worst = ranks
        .into_iter()
        .map(|j| j.join().unwrap_or(PANIC_EXIT_CODE))
        .max()
        .unwrap_or(0);
    crate::checkpoint::ranks_done();
    // A checkpoint still being written is committed before the process ends
    // (across processes, while the network still runs: process 0 commits once
    // every process reported its image durable).
    crate::craas::finish();
    crate::checkpoint::finish();
    if let Some(f) = fabric {
        // MPI_Finalize: this process serves the others until all are done
        // (and answers their checkpoint requests: it refuses them).
        finish_fabric(f);
    }
    crate::deadlock::detector::stop();
    drop(requests);
    *RUNNING.lock().unwrap() = None;
    sched.shutdown();
    worst
}

#[cfg(test)]
mod tests {
    use super::{env, JobConfig};

    #[test]
    fn yield_when_idle_is_read_as_0_or_1_and_anything_else_is_named() {
        let with = |v: &'static str| {
            JobConfig::from_variables(move |k| {
                (k == env::YIELD_WHEN_IDLE.name).then(|| v.to_string())
            })
        };
        assert_eq!(with("1").unwrap().yield_when_idle, Some(true));
        assert_eq!(with("0").unwrap().yield_when_idle, Some(false));
        let e = with("yes").unwrap_err();
        assert!(
            e.contains("MPCRS_YIELD_WHEN_IDLE") && e.contains("yes"),
            "{e}"
        );
        assert_eq!(
            JobConfig::from_variables(|_| None).unwrap().yield_when_idle,
            None
        );
    }
}
