//! Recovery in place (`mpcrs-run --recover in-place`): when a process of the
//! job dies, the others are not ended. mpcrs-run starts a replacement in its
//! place and tells every survivor of the new run; the survivors' ranks leave
//! what they were doing, the processes join the new run's network with fresh
//! MPI state, and every rank of the job, survivors included, runs its body
//! (the program's `main`, a Rust program's closure) again from the start. The
//! program finds its data again with CRaaS_Rst_* or FTI_Recover.
//!
//! The protocol of one process (the launcher's half is mpcrs-launch's
//! recovery.rs; the words on the wire are in `notice.rs`):
//! 1. At start-up a watcher thread connects to `MPCRS_RECOVERY_PORT`, proves
//!    the job's secret and says which process it is.
//! 2. Ranks run their body with `in_body` set. A rank whose body returned 0
//!    parks in [`after_body`] until the launcher decides: the end of the job,
//!    once every process said all its ranks returned (`done R`), or a new run.
//! 3. A new run (`run R` and the variables of its network): `recovering` is
//!    set and every rank is woken. A rank in its body leaves it at its next
//!    park, yield or MPI call by unwinding its stack with [`Recovery`] (so its
//!    frames' destructors run and nothing it held stays allocated); a rank
//!    already out of its body was parked in step 2.
//! 4. Once every rank of the process is out, the watcher makes the process's
//!    state of the new run (`Rebuild`: the network of the new run, a fresh
//!    world communicator), clears `recovering`, lets the ranks go into their
//!    body again and says `ready R`.
//!
//! Messages of an earlier run cannot reach a later one: each run has a network
//! of its own (new sockets, new shared-memory names from the new job id), the
//! frames the old one still delivers are dropped by run number (remote/), and
//! the communicators that held the old run's unmatched messages are dropped
//! with the old world.
//!
//! Not recovered: a rank that never parks, yields or calls MPI again (it
//! computes for ever) keeps its process from joining the new run; program
//! threads started by a rank unwind with it. Images of the processes
//! (MPIX_Checkpoint, SIGUSR1) are refused: a replacement's would not match
//! its survivors'.

mod notice;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::comm::CommShared;

pub(crate) use notice::Notice;

/// The payload a rank's stack unwinds with when it leaves its body for a new
/// run. Raised with `resume_unwind`, so no panic hook reports it.
pub struct Recovery;

/// What makes the process's state for a new run, given the variables of that
/// run (those the launcher sent, else this process's environment): returns
/// the world communicator the ranks start the run with.
pub(crate) type Rebuild = Box<
    dyn Fn(&dyn Fn(&str) -> Option<String>, u64) -> Result<Arc<CommShared>, String> + Send + Sync,
>;

/// One rank of this process.
#[derive(Default)]
struct Slot {
    /// The rank runs its body (and may be made to leave it).
    in_body: AtomicBool,
    /// The rank is parked out of its body, waiting for a decision.
    out: AtomicBool,
    /// Wakes the rank wherever it parked.
    unparker: Mutex<Option<mpcrs_scheduler::Unparker>>,
}

/// What ranks out of their body wait for.
#[derive(Clone)]
enum Decision {
    Undecided,
    /// Every process finished this run: the job ends.
    End,
    /// Run `.0` starts with this world.
    Run(u64, Arc<CommShared>),
}

struct State {
    first: usize,
    slots: Box<[Slot]>,
    /// Set from a new run's notice until the process is ready for it.
    recovering: AtomicBool,
    /// The run this process's ranks are in.
    run: AtomicU64,
    decision: Mutex<Decision>,
    /// The failure that started the recovery under way, and when its notice came.
    started: Mutex<Option<Instant>>,
}

static STATE: OnceLock<State> = OnceLock::new();

#[inline]
fn state() -> Option<&'static State> {
    STATE.get()
}

impl State {
    fn slot(&self, rank: usize) -> Option<&Slot> {
        self.slots.get(rank.checked_sub(self.first)?)
    }

    fn all_out(&self) -> bool {
        self.slots.iter().all(|s| s.out.load(Ordering::Acquire))
    }

    fn wake_all(&self) {
        for s in self.slots.iter() {
            if let Some(u) = s.unparker.lock().unwrap().as_ref() {
                u.unpark();
            }
        }
    }
}

/// Arms recovery in place for this process's `local` ranks, starting in `run`,
/// and starts the watcher: from here on a new run's notice rebuilds the
/// process with `rebuild`. Called once, before the ranks start.
pub(crate) fn arm(
    process: usize,
    local: std::ops::Range<usize>,
    run: u64,
    rebuild: Rebuild,
) -> Result<(), String> {
    let st = State {
        first: local.start,
        slots: local.clone().map(|_| Slot::default()).collect(),
        recovering: AtomicBool::new(false),
        run: AtomicU64::new(run),
        decision: Mutex::new(Decision::Undecided),
        started: Mutex::new(None),
    };
    if STATE.set(st).is_err() {
        return Err("recovery in place is armed once per process".into());
    }
    let notice = Notice::connect(process)?;
    std::thread::Builder::new()
        .name("mpcrs-recovery".into())
        .spawn(move || watch(notice, rebuild))
        .map_err(|e| format!("cannot start the recovery watcher: {e}"))?;
    mpcrs_scheduler::set_after_suspend_hook(leave_if_recovering_word);
    crate::process::on_peer_death_await(wait_for_new_run);
    // Every process of the job says the same: a replacement's images would
    // not match its survivors'.
    crate::checkpoint::register_veto(|_| {
        Some("a job recovered in place (--recover in-place) keeps the application's checkpoints (CRaaS, FTI), not images of its processes".into())
    });
    Ok(())
}

/// Makes the calling rank leave its body if a new run is under way: at every
/// MPI call of a C program (mpi-abi's entry points), so that a rank that
/// polls without parking leaves too.
#[inline]
pub fn leave_if_recovering() {
    if let Some(st) = state() {
        if st.recovering.load(Ordering::Relaxed) {
            leave_if_recovering_word(mpcrs_scheduler::ult_local());
        }
    }
}

/// The scheduler's after-suspend hook: a ULT acting for a rank (the rank, its
/// window agents, threads it started) in its body unwinds when a new run is
/// under way.
fn leave_if_recovering_word(word: usize) {
    let Some(st) = state() else { return };
    if !st.recovering.load(Ordering::Acquire) {
        return;
    }
    let Some(rank) = crate::process::rank_of_ult_word(word) else {
        return;
    };
    if st
        .slot(rank as usize)
        .is_some_and(|s| s.in_body.load(Ordering::Acquire))
    {
        std::panic::resume_unwind(Box::new(Recovery));
    }
}

/// Parks the calling rank until a new run starts, and leaves its body for it
/// (the network lost a peer: the launcher is starting one).
pub(crate) fn wait_for_new_run() -> ! {
    loop {
        mpcrs_scheduler::park_timeout(std::time::Duration::from_millis(5));
        leave_if_recovering();
    }
}

/// The calling rank enters its body.
pub(crate) fn entering_body(rank: usize) {
    let Some(slot) = state().and_then(|s| s.slot(rank)) else {
        return;
    };
    *slot.unparker.lock().unwrap() = Some(mpcrs_scheduler::current());
    slot.out.store(false, Ordering::Release);
    slot.in_body.store(true, Ordering::Release);
}

/// What a rank does after its body ended.
pub(crate) enum After {
    /// Ends as without recovery (its status decides).
    Finish,
    /// Runs its body again with this world, in a new run.
    Again(Arc<CommShared>),
}

/// Called by a rank whose body ended with `ended` (its status, or the payload
/// it unwound with). Without recovery, or for a failure, the rank finishes;
/// a rank that left for a new run, or returned 0, waits here for the
/// launcher's decision.
pub(crate) fn after_body(rank: usize, ended: &std::thread::Result<i32>) -> After {
    let Some(st) = state() else {
        return After::Finish;
    };
    let Some(slot) = st.slot(rank) else {
        return After::Finish;
    };
    slot.in_body.store(false, Ordering::Release);
    let left = match ended {
        Err(p) => p.is::<Recovery>(),
        Ok(0) => false,
        // A failing rank ends the process, which starts a recovery of the others.
        Ok(_) => return After::Finish,
    };
    if !left && ended.is_err() {
        return After::Finish;
    }
    let run = st.run.load(Ordering::Acquire);
    tracing::debug!(rank, run, left, "out of its body");
    slot.out.store(true, Ordering::Release);
    loop {
        match &*st.decision.lock().unwrap() {
            Decision::End if !left => return After::Finish,
            Decision::Run(r, world) if *r > run => {
                slot.out.store(false, Ordering::Release);
                return After::Again(world.clone());
            }
            _ => {}
        }
        mpcrs_scheduler::park();
    }
}

/// The watcher thread: reports the end of this process's ranks, and makes new
/// runs when the launcher says so.
fn watch(mut notice: Notice, rebuild: Rebuild) {
    let st = state().expect("armed");
    let mut said_done = 0;
    loop {
        // All ranks returned from their body in the current run: say so once.
        let run = st.run.load(Ordering::Acquire);
        if said_done != run && st.all_out() && !st.recovering.load(Ordering::Acquire) {
            tracing::debug!(run, "every rank of this process returned");
            if notice.say(&format!("done {run}")).is_err() {
                return;
            }
            said_done = run;
        }
        match notice.next(std::time::Duration::from_millis(20)) {
            Ok(None) => continue,
            Ok(Some(notice::Word::End)) => {
                *st.decision.lock().unwrap() = Decision::End;
                st.wake_all();
                return;
            }
            Ok(Some(notice::Word::Run(r, vars))) => {
                *st.started.lock().unwrap() = Some(Instant::now());
                new_run(st, r, &vars, &rebuild);
                let _ = notice.say(&format!("ready {r}"));
            }
            Err(e) => {
                // The launcher is gone: the job ends with it.
                tracing::debug!("recovery connection closed: {e}");
                return;
            }
        }
    }
}

/// Takes this process into run `r`: its ranks out of their bodies, its state
/// made again, its ranks into their bodies.
fn new_run(st: &State, r: u64, vars: &[(String, Option<String>)], rebuild: &Rebuild) {
    st.recovering.store(true, Ordering::Release);
    // Ranks parked anywhere (waiting for the dead process, or for the end)
    // wake up and leave; ranks computing leave at their next MPI call.
    while !st.all_out() {
        st.wake_all();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let var = |k: &str| match vars.iter().find(|(name, _)| name == k) {
        Some((_, v)) => v.clone(),
        None => std::env::var(k).ok(),
    };
    for rank in st.first..st.first + st.slots.len() {
        crate::craas::on_new_run(rank as u32, r);
    }
    let world = match rebuild(&var, r) {
        Ok(w) => w,
        Err(e) => {
            mpcrs_settings::report!(
                error,
                "mpcrs: cannot join run {r} of the job after a failure: {e}"
            );
            crate::process::abort_job(1)
        }
    };
    st.run.store(r, Ordering::Release);
    // In their body again from here on (they are told below): the watcher
    // must not take them for done.
    for s in st.slots.iter() {
        s.out.store(false, Ordering::Release);
    }
    *st.decision.lock().unwrap() = Decision::Run(r, world);
    st.recovering.store(false, Ordering::Release);
    st.wake_all();
}
