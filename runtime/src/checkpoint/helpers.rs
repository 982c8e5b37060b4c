//! Helper tasks: background ULTs of the job's scheduler, which run when the
//! ranks of their worker wait, never preempt one, and do their file I/O on the
//! scheduler's blocking pool (so no worker that runs ranks sleeps in a system
//! call for them). They post-process committed epochs (post.rs).
//!
//! The next checkpoint first [`stop`]s them: work on this node alone (the L4
//! flush) ends at its next piece, leaving no file under its final name; work
//! with other processes (L2 copies, L3 encoding) is finished, since its peers
//! wait for it. Meanwhile helpers no longer yield between pieces. So no image
//! holds a helper half-way. The end of the job waits for them ([`drain`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use mpcrs_levels::Io;
use mpcrs_scheduler::JoinHandle;

/// The scheduler the helpers run on, handed over at start.
static SCHEDULER: OnceLock<mpcrs_scheduler::Handle> = OnceLock::new();

/// Which checkpoints a level's work belongs to: each kind talks in a context
/// of its own, so their epochs (numbered apart) never share a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// Images of whole processes (MPIX_Checkpoint, SIGUSR1, intervals).
    Images,
    /// Data the application protects (FTI's API, ft/).
    Application,
}

/// The transports between the processes' helpers (jobs of several
/// processes), one per [`Stream`].
static TRANSPORTS: OnceLock<[Box<dyn mpcrs_levels::Transport>; 2]> = OnceLock::new();

/// Helpers under way.
static RUNNING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Set while [`stop`] waits: work on this node alone ends at its next piece.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Set while someone waits for the helpers: they no longer yield.
static HURRY: AtomicBool = AtomicBool::new(false);

/// Lets helpers run on `handle`'s workers.
pub(crate) fn set_scheduler(handle: mpcrs_scheduler::Handle) {
    let _ = SCHEDULER.set(handle);
}

/// Lets helpers of different processes talk (handed over at start): the
/// transport of [`Stream::Images`], then of [`Stream::Application`].
pub(crate) fn set_transports(t: [Box<dyn mpcrs_levels::Transport>; 2]) {
    let _ = TRANSPORTS.set(t);
}

/// The transport between the processes' helpers for `stream`, in a job of
/// several.
pub(super) fn transport(stream: Stream) -> Option<&'static dyn mpcrs_levels::Transport> {
    TRANSPORTS.get().map(|t| t[stream as usize].as_ref())
}

/// How helpers do I/O: blocking calls on the blocking pool (inline outside a
/// ULT), a yield between pieces unless someone waits for them.
pub(crate) struct HelperIo;

impl Io for HelperIo {
    fn blocking(&self, f: &mut dyn FnMut()) {
        if !mpcrs_scheduler::in_ult() {
            return f();
        }
        struct Job(*mut (dyn FnMut() + 'static));
        // SAFETY: the pointer is used by the one pool thread that runs the job,
        // while the caller is parked in `run_blocking` until it returns.
        unsafe impl Send for Job {}
        // SAFETY: `run_blocking` returns only after the job ran, so `f` (borrowed
        // for the whole call) outlives every use; the lifetime is erased only to
        // pass it to the pool.
        let job = Job(unsafe {
            std::mem::transmute::<*mut (dyn FnMut() + '_), *mut (dyn FnMut() + 'static)>(f)
        });
        mpcrs_scheduler::run_blocking(move || {
            let job = job;
            // SAFETY: see `Job`.
            unsafe { (*job.0)() }
        });
    }

    fn pause(&self) {
        if !HURRY.load(Ordering::Acquire) {
            mpcrs_scheduler::yield_now();
        }
    }

    fn stopped(&self) -> bool {
        STOPPING.load(Ordering::Acquire)
    }
}

/// A helper started by [`spawn`].
pub(super) enum Helper<T> {
    Running(JoinHandle<T>),
    /// It ran in place (no scheduler).
    Done(T),
}

impl<T> Helper<T> {
    /// Its result, once it ended (`None`: it panicked).
    pub(super) fn join(self) -> Option<T> {
        match self {
            Helper::Running(h) => h.join().ok(),
            Helper::Done(t) => Some(t),
        }
    }
}

/// Starts `work` as a helper; without a scheduler (a program that never
/// started the runtime's workers), runs it here.
pub(super) fn spawn<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Helper<T> {
    match SCHEDULER.get() {
        // The last worker: with one rank per worker, rank 0's worker (which
        // often does more) is spared.
        Some(h) => {
            AT_WORK.fetch_add(1, Ordering::AcqRel);
            Helper::Running(h.spawn_background(h.workers() - 1, move || {
                let _done = AtWork;
                work()
            }))
        }
        None => Helper::Done(work()),
    }
}

/// Helpers started and not yet finished.
static AT_WORK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts a helper's end however its work ends.
struct AtWork;

impl Drop for AtWork {
    fn drop(&mut self) {
        AT_WORK.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether helpers are at work (the deadlock check waits for them: they may
/// end a rank's wait).
pub(crate) fn at_work() -> bool {
    AT_WORK.load(Ordering::Acquire) > 0
}

/// Starts `work` as a helper that [`drain`] and [`stop`] wait for.
pub(super) fn start(work: impl FnOnce() + Send + 'static) {
    if let Helper::Running(h) = spawn(work) {
        RUNNING.lock().unwrap().push(h);
    }
}

/// Waits for every helper under way, which meanwhile do not yield.
pub(crate) fn drain() {
    HURRY.store(true, Ordering::Release);
    loop {
        let running: Vec<_> = std::mem::take(&mut *RUNNING.lock().unwrap());
        if running.is_empty() {
            break;
        }
        for h in running {
            let _ = h.join();
        }
    }
    HURRY.store(false, Ordering::Release);
}

/// Stops the work of helpers on this node alone at its next piece, finishes
/// the rest, and waits for all.
pub(crate) fn stop() {
    STOPPING.store(true, Ordering::Release);
    drain();
    STOPPING.store(false, Ordering::Release);
}
