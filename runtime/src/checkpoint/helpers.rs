//! Post-processing of a committed epoch by helper ULTs: background ULTs of
//! the job's scheduler, which run when the ranks of their worker wait, never
//! preempt one, and do their file I/O on the scheduler's blocking pool. Today
//! they flush each process's L1 image to the global directory (L4). The next
//! checkpoint stops them first ([`stop`]: the work of the older epoch is
//! dropped, that epoch stays usable from L1, and no image holds a helper
//! half-way); the end of the job waits for them ([`drain`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use mpcrs_levels::Io;
use mpcrs_scheduler::JoinHandle;

/// The scheduler the helpers run on, handed over at start.
static SCHEDULER: OnceLock<mpcrs_scheduler::Handle> = OnceLock::new();

/// Helpers under way.
static RUNNING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Set while [`stop`] waits for the helpers: they end at their next piece.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Lets helpers run on `handle`'s workers.
pub(crate) fn set_scheduler(handle: mpcrs_scheduler::Handle) {
    let _ = SCHEDULER.set(handle);
}

/// How helpers do I/O: blocking calls on the blocking pool (inline outside a
/// ULT), a yield between pieces.
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
        mpcrs_scheduler::yield_now();
    }

    fn stopped(&self) -> bool {
        STOPPING.load(Ordering::Acquire)
    }
}

/// Starts the flush of this process's L1 image `l1` of epoch `epoch` to `l4`
/// on a helper ULT; then prunes this process's local epochs older than
/// `oldest_kept`. Without a scheduler (the job ended), it runs here.
pub(crate) fn flush_to_global(
    epoch: u64,
    l1: PathBuf,
    l4: PathBuf,
    prune: impl FnOnce() + Send + 'static,
) {
    let work = move || {
        match mpcrs_levels::store::copy_durably(&HelperIo, &l1, &l4) {
            Ok(bytes) => tracing::debug!(epoch, bytes, to = %l4.display(), "L4: image flushed"),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                tracing::debug!(epoch, "L4: flush stopped by the next checkpoint")
            }
            Err(e) => mpcrs_settings::report!(
                warn,
                "mpcrs: checkpoint epoch {epoch}: the copy to the global directory failed ({e}); the epoch stays usable from node-local storage"
            ),
        }
        prune();
    };
    match SCHEDULER.get() {
        Some(h) => {
            let worker = h.workers() - 1;
            RUNNING
                .lock()
                .unwrap()
                .push(h.spawn_background(worker, work));
        }
        None => work(),
    }
}

/// Waits for every helper under way.
pub(crate) fn drain() {
    let running: Vec<_> = std::mem::take(&mut *RUNNING.lock().unwrap());
    for h in running {
        let _ = h.join();
    }
}

/// Stops every helper under way at its next piece of work, and waits for it.
pub(crate) fn stop() {
    STOPPING.store(true, Ordering::Release);
    drain();
    STOPPING.store(false, Ordering::Release);
}
