//! Offload of blocking system calls (file I/O) to a small pool of OS threads, so a
//! ULT doing I/O parks instead of stalling its worker and every ULT queued behind it.
//! Pool threads exit after a second without work, so an idle process goes back to
//! its workers only.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crossbeam::channel::{unbounded, Receiver, RecvTimeoutError, Sender};

use crate::sync::Event;

type Job = Box<dyn FnOnce() + Send>;

const MAX_THREADS: usize = 4;
const IDLE_EXIT: Duration = Duration::from_secs(1);

struct Pool {
    tx: Sender<Job>,
    rx: Receiver<Job>,
    threads: AtomicUsize,
    idle: AtomicUsize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = unbounded();
        Pool {
            tx,
            rx,
            threads: AtomicUsize::new(0),
            idle: AtomicUsize::new(0),
        }
    })
}

impl Pool {
    fn submit(&'static self, job: Job) {
        self.tx.send(job).expect("blocking pool channel closed");
        if self.idle.load(Ordering::Acquire) == 0
            && self.threads.load(Ordering::Acquire) < MAX_THREADS
        {
            self.threads.fetch_add(1, Ordering::AcqRel);
            let spawned = std::thread::Builder::new()
                .name("mpcrs-blocking".into())
                .spawn(move || self.serve());
            if spawned.is_err() {
                self.threads.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    fn serve(&self) {
        loop {
            self.idle.fetch_add(1, Ordering::AcqRel);
            let job = self.rx.recv_timeout(IDLE_EXIT);
            self.idle.fetch_sub(1, Ordering::AcqRel);
            match job {
                Ok(job) => job(),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    self.threads.fetch_sub(1, Ordering::AcqRel);
                    // A job queued while we decided to leave may have seen us as alive
                    // and spawned nobody: take it.
                    if !self.rx.is_empty() {
                        self.threads.fetch_add(1, Ordering::AcqRel);
                        continue;
                    }
                    return;
                }
            }
        }
    }
}

/// Runs `f` on the blocking pool and parks the calling ULT until it returns. Called
/// outside a ULT, runs `f` inline. A panic in `f` is propagated to the caller.
pub fn run_blocking<T, F>(f: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if !crate::in_ult() {
        return f();
    }
    let slot: Arc<(Mutex<Option<std::thread::Result<T>>>, Event)> =
        Arc::new((Mutex::new(None), Event::new()));
    let out = slot.clone();
    pool().submit(Box::new(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        *out.0.lock().unwrap() = Some(r);
        out.1.set();
    }));
    slot.1.wait();
    let result = slot
        .0
        .lock()
        .unwrap()
        .take()
        .expect("blocking result missing");
    match result {
        Ok(v) => v,
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// Number of pool threads alive now (for tests and the checkpoint's one-thread check).
pub fn blocking_threads() -> usize {
    pool().threads.load(Ordering::Acquire)
}
