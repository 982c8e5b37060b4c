//! The scheduler object: configuration, worker start-up and shutdown, spawning.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::idle::{Sleeper, DEFAULT_IDLE_SPIN};
use crate::progress::Progress;
use crate::queue::Inbox;
use crate::sync::Event;
use crate::task::{JoinSlot, Task};
use crate::topology::{CpuPlace, Topology};
use crate::worker::{self, WorkerCtx};
use crate::JoinHandle;

pub(crate) struct Config {
    pub(crate) stack_size: usize,
    /// How long an idle worker spins before it sleeps, unless it yields when
    /// idle (then it does not spin).
    pub(crate) idle_spin: Duration,
    /// Waiting threads give their CPU away between polls instead of spinning:
    /// more threads poll than there are CPUs for them. Set at start, and again
    /// once the job knows which processes share the machine
    /// ([`Handle::set_yield_when_idle`]).
    pub(crate) yield_when_idle: AtomicBool,
}

impl Config {
    pub(crate) fn yields_when_idle(&self) -> bool {
        self.yield_when_idle.load(Ordering::Relaxed)
    }
}

/// What other threads may touch of a worker.
pub(crate) struct WorkerShared {
    pub(crate) inbox: Inbox,
    pub(crate) sleeper: Sleeper,
}

pub(crate) struct Shared {
    pub(crate) workers: Vec<WorkerShared>,
    pub(crate) config: Config,
    pub(crate) shutdown: AtomicBool,
    /// ULTs spawned and not yet finished.
    pub(crate) live: AtomicUsize,
    hooks: crate::progress::Hooks,
    next_worker: AtomicUsize,
}

/// The scheduler of this process, for threads that are no worker: a
/// program's own thread waiting in MPI polls its progress hooks itself
/// ([`poll_progress_foreign`]).
static LATEST: std::sync::Mutex<std::sync::Weak<Shared>> =
    std::sync::Mutex::new(std::sync::Weak::new());

/// Polls the progress hooks of this process's scheduler from a thread that is
/// no worker (the hooks see [`crate::progress::FOREIGN_THREAD`]); whether any
/// moved something. The workers may all be busy: a ULT blocked in a system
/// call (a rank joining its own threads) holds its worker.
pub(crate) fn poll_progress_foreign() -> Option<bool> {
    thread_local! {
        /// LATEST as this thread last read it: a thread that polls while it
        /// waits (park.rs) calls this back to back, and takes LATEST's lock
        /// only when the scheduler it knows is gone or shut down.
        static KNOWN: std::cell::RefCell<std::sync::Weak<Shared>> =
            const { std::cell::RefCell::new(std::sync::Weak::new()) };
    }
    let shared = KNOWN.with(|known| {
        let mut known = known.borrow_mut();
        match known.upgrade() {
            Some(s) if !s.shutdown.load(Ordering::Acquire) => Some(s),
            _ => {
                *known = LATEST.lock().unwrap_or_else(|e| e.into_inner()).clone();
                known.upgrade()
            }
        }
    })?;
    if !shared.has_progress_hooks() || shared.shutdown.load(Ordering::Acquire) {
        return None;
    }
    Some(shared.poll_progress(crate::progress::FOREIGN_THREAD))
}

impl Shared {
    pub(crate) fn has_progress_hooks(&self) -> bool {
        !self.hooks.is_empty()
    }

    pub(crate) fn poll_progress(&self, worker: usize) -> bool {
        self.hooks.poll(worker)
    }

    pub(crate) fn arm_bells(&self, out: &mut Vec<Box<dyn crate::bell::Armed>>) {
        self.hooks.arm(out)
    }

    /// Whether the hooks ring bells for everything they wait for, and bells
    /// work here.
    pub(crate) fn hooks_ring_for_everything(&self) -> bool {
        crate::bell::available() && self.has_progress_hooks() && self.hooks.ring_for_everything()
    }
}

/// Configures and starts a [`Scheduler`].
pub struct Builder {
    workers: Option<usize>,
    stack_size: usize,
    stack_guards: Option<usize>,
    binding: crate::topology::Binding,
    idle_spin: Duration,
    yield_when_idle: Option<bool>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            workers: None,
            stack_size: crate::DEFAULT_STACK_SIZE,
            stack_guards: None,
            binding: crate::topology::Binding::Core,
            idle_spin: DEFAULT_IDLE_SPIN,
            yield_when_idle: None,
        }
    }
}

impl Builder {
    /// Number of worker threads; default: one per CPU of the process's cpuset.
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n.max(1));
        self
    }

    /// Stack size of ULTs spawned without an explicit size.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }

    /// How many ULT stacks of the process get a guard page; the others get a
    /// red zone and a canary (see `stack.rs`). By default a quarter of
    /// vm.max_map_count. Process-wide: the last scheduler built sets it.
    pub fn stack_guards(mut self, stacks: usize) -> Self {
        self.stack_guards = Some(stacks);
        self
    }

    /// Pin each worker to its CPU (default true); false: [`Binding::None`](crate::Binding::None).
    pub fn pin(mut self, pin: bool) -> Self {
        self.binding = if pin {
            crate::topology::Binding::Core
        } else {
            crate::topology::Binding::None
        };
        self
    }

    /// Where each worker may run (default [`Binding::Core`](crate::Binding::Core)).
    pub fn bind(mut self, binding: crate::topology::Binding) -> Self {
        self.binding = binding;
        self
    }

    /// How long an idle worker spins before sleeping in the kernel.
    pub fn idle_spin(mut self, d: Duration) -> Self {
        self.idle_spin = d;
        self
    }

    /// Whether waiting workers and ranks yield their CPU between polls instead
    /// of spinning (as mpirun's "yield when idle"): for processes that share CPUs
    /// with others polling too. By default, when there are more workers than
    /// CPUs.
    pub fn yield_when_idle(mut self, yes: bool) -> Self {
        self.yield_when_idle = Some(yes);
        self
    }

    pub fn build(self) -> std::io::Result<Scheduler> {
        let topology = Topology::detect();
        let places = topology.worker_places(self.workers);
        let yield_when_idle = self
            .yield_when_idle
            .unwrap_or(places.len() > topology.cpus.len());
        let shared = Arc::new(Shared {
            workers: places
                .iter()
                .map(|_| WorkerShared {
                    inbox: Inbox::new(),
                    sleeper: Sleeper::default(),
                })
                .collect(),
            config: Config {
                stack_size: self.stack_size,
                idle_spin: self.idle_spin,
                yield_when_idle: AtomicBool::new(yield_when_idle),
            },
            shutdown: AtomicBool::new(false),
            live: AtomicUsize::new(0),
            hooks: crate::progress::Hooks::new(),
            next_worker: AtomicUsize::new(0),
        });
        *LATEST.lock().unwrap_or_else(|e| e.into_inner()) = Arc::downgrade(&shared);
        crate::fault::install_handler();
        if let Some(n) = self.stack_guards {
            crate::stack::set_guard_budget(n);
        }
        let mut threads = Vec::with_capacity(places.len());
        // Workers that yield when idle share their CPUs with other threads or
        // processes (more workers than CPUs, or processes that outnumber them):
        // the kernel places them. Pinned, every process's worker 0 would sit on
        // the first CPU, leaving the others idle.
        let binding = if yield_when_idle {
            crate::topology::Binding::None
        } else {
            self.binding
        };
        // Workers bound so far: the scheduler is returned once all are, so
        // that what the process reports of its binding (`--report-bindings`)
        // is what the kernel holds.
        let bound = Arc::new(AtomicUsize::new(0));
        for (index, place) in places.iter().enumerate() {
            let shared = shared.clone();
            let bound = bound.clone();
            let cpus = binding.cpus_of(place, &topology.cpus);
            let t = std::thread::Builder::new()
                .name(format!("mpcrs-worker-{index}"))
                .spawn(move || {
                    if let Some(cpus) = cpus {
                        // A CPU the kernel refuses leaves the worker where it is.
                        let _ = crate::topology::bind_current_thread(&cpus);
                    }
                    bound.fetch_add(1, Ordering::Release);
                    WorkerCtx::new(index, shared).run();
                })
                .map_err(|e| {
                    std::io::Error::new(e.kind(), crate::limits::explain_thread_failure(&e))
                })?;
            threads.push(t);
        }
        while bound.load(Ordering::Acquire) < threads.len() {
            std::thread::yield_now();
        }
        Ok(Scheduler {
            shared,
            threads: Mutex::new(threads),
            places,
            topology,
        })
    }
}

/// A running set of workers. Dropping it shuts the workers down once their queues
/// are empty; ULTs still parked then are abandoned.
pub struct Scheduler {
    shared: Arc<Shared>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    places: Vec<CpuPlace>,
    topology: Topology,
}

impl Scheduler {
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A scheduler with default settings.
    pub fn new() -> std::io::Result<Scheduler> {
        Builder::default().build()
    }

    pub fn handle(&self) -> Handle {
        Handle {
            shared: self.shared.clone(),
        }
    }

    pub fn workers(&self) -> usize {
        self.shared.workers.len()
    }

    /// Where each worker runs (CPU, core, package, NUMA node).
    pub fn places(&self) -> &[CpuPlace] {
        &self.places
    }

    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Stops the workers after their queues drain and waits for them.
    pub fn shutdown(&self) {
        self.shared.shutdown.store(true, Ordering::Release);
        for w in &self.shared.workers {
            w.sleeper.wake();
        }
        let threads = std::mem::take(&mut *self.threads.lock().unwrap());
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A cloneable reference to a scheduler, usable from any thread.
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    pub fn workers(&self) -> usize {
        self.shared.workers.len()
    }

    /// Whether waiting threads give their CPU away between polls.
    pub fn yields_when_idle(&self) -> bool {
        self.shared.config.yields_when_idle()
    }

    /// Makes waiting threads give their CPU away between polls (or spin): for
    /// a process that learns after start that other processes' workers share
    /// its CPUs (hosts that are containers of one machine).
    pub fn set_yield_when_idle(&self, yes: bool) {
        self.shared
            .config
            .yield_when_idle
            .store(yes, Ordering::Relaxed);
    }

    /// ULTs spawned and not finished yet.
    pub fn live_ults(&self) -> usize {
        self.shared.live.load(Ordering::Acquire)
    }

    /// Spawns a ULT on the next worker in round-robin order.
    pub fn spawn<T, F>(&self, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let w = self.shared.next_worker.fetch_add(1, Ordering::Relaxed) % self.workers();
        self.spawn_on(w, f)
    }

    /// Spawns a ULT on `worker` with the default stack size; it never leaves it.
    pub fn spawn_on<T, F>(&self, worker: usize, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_with_stack(worker, self.shared.config.stack_size, f)
    }

    /// Spawns a ULT on `worker` with a stack of `stack_size` bytes.
    pub fn spawn_with_stack<T, F>(&self, worker: usize, stack_size: usize, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_task(worker, stack_size, false, f)
    }

    /// Spawns a background ULT on `worker`: a helper that runs only when the
    /// worker has no other ULT ready (they all park, or wait), or for one turn
    /// after another ULT yields. It never preempts a running ULT; to let the
    /// others run it yields between pieces of its work, and it does blocking
    /// system calls through [`crate::run_blocking`].
    pub fn spawn_background<T, F>(&self, worker: usize, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_task(worker, self.shared.config.stack_size, true, f)
    }

    fn spawn_task<T, F>(
        &self,
        worker: usize,
        stack_size: usize,
        background: bool,
        f: F,
    ) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        assert!(worker < self.workers(), "worker {worker} out of range");
        let slot = Arc::new(JoinSlot {
            result: Mutex::new(None),
            done: Event::new(),
        });
        let out = slot.clone();
        let body = Box::new(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            *out.result.lock().unwrap() = Some(r);
            out.done.set();
        });
        self.shared.live.fetch_add(1, Ordering::AcqRel);
        let task = Task::new(self.shared.clone(), worker, body, stack_size, background);
        worker::schedule(task);
        JoinHandle { slot }
    }

    /// Registers a progress hook polled by every worker.
    pub fn add_progress_hook(&self, hook: Arc<dyn Progress>) {
        self.shared.hooks.add(hook);
        // A worker asleep without a timeout (it had no hook to poll) must start
        // polling: with no ULT to wake it (a rank that is an OS thread), it would
        // sleep for good.
        for w in self.shared.workers.iter() {
            w.sleeper.wake();
        }
    }

    /// Wakes a worker that may be sleeping (used by drivers when an event arrives).
    pub fn wake_worker(&self, worker: usize) {
        self.shared.workers[worker].sleeper.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::Scheduler;

    #[test]
    fn more_workers_than_cpus_yield_when_idle_unless_told_otherwise() {
        let cpus = crate::Topology::detect().cpus.len();
        let build = |b: super::Builder| b.pin(false).build().unwrap();
        let over = build(Scheduler::builder().workers(cpus + 1));
        assert!(over.shared.config.yields_when_idle());
        let fit = build(Scheduler::builder().workers(cpus));
        assert!(!fit.shared.config.yields_when_idle());
        let told = build(
            Scheduler::builder()
                .workers(cpus + 1)
                .yield_when_idle(false),
        );
        assert!(!told.shared.config.yields_when_idle());
        // Learnt later (processes of other hosts on this machine).
        told.handle().set_yield_when_idle(true);
        assert!(told.handle().yields_when_idle());
    }

    /// CPUs the calling thread may run on.
    fn allowed_cpus() -> usize {
        // SAFETY: a zeroed cpu_set_t is a valid out-parameter of the size given.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            libc::CPU_COUNT(&set) as usize
        }
    }

    #[test]
    fn workers_that_share_their_cpus_are_not_pinned() {
        let cpus = crate::Topology::detect().cpus.len();
        let on_worker = |s: Scheduler| s.handle().spawn(allowed_cpus).join().unwrap();
        let pinned = Scheduler::builder()
            .workers(1)
            .yield_when_idle(false)
            .build()
            .unwrap();
        assert_eq!(on_worker(pinned), 1, "a worker of its own is pinned");
        let sharing = Scheduler::builder()
            .workers(1)
            .yield_when_idle(true)
            .build()
            .unwrap();
        assert_eq!(
            on_worker(sharing),
            cpus,
            "a worker yielding when idle goes anywhere"
        );
    }
}
