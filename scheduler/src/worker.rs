//! A worker: one pinned OS thread running ULTs from its local queue, polling progress
//! hooks between them, and sleeping when everything it owns is parked.
//!
//! The loop, each round: take ULTs handed over by other threads, fire due
//! timers, wake ULTs whose bell rang, run one ready ULT (polling the hooks
//! every 16 runs). With nothing ready and nothing moved by a poll, the worker
//! is idle, and in turn:
//! 1. spins up to `idle_spin`, unless its CPUs are shared;
//! 2. with progress hooks, polls and yields its CPU for up to
//!    [`crate::idle::PROGRESS_POLL`], unless its CPUs are shared and every hook
//!    rings a bell for everything it waits for;
//! 3. sleeps: it arms the hooks' bells, polls once more (what was sent before
//!    the arming rang nothing), then waits on its own futex word, the hooks'
//!    bells and its ULTs' bells at once, until its next timer, at most 1 ms
//!    with hooks (drivers without bells are polled that often).
//!
//! Running a ULT its own timer woke does not end the idle stretch (a poller
//! between sleeps would otherwise keep the worker in step 2 for good); any
//! other ULT run, or a poll that moved something, does.

use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::CoroutineResult;

use crate::bell::{Bell, Woke};
use crate::idle::{count, Count};
use crate::stack::{StackPool, UltStack};

use crate::queue::LocalQueue;
use crate::scheduler::Shared;
use crate::task::{Body, Suspend, Task, Ult};
use crate::timer::Timers;

/// ULT runs between two polls of the progress hooks when the queue is busy.
const RUNS_PER_POLL: u32 = 16;

/// State only the worker's own thread touches.
pub(crate) struct WorkerCtx {
    pub(crate) index: usize,
    pub(crate) shared: Arc<Shared>,
    queue: LocalQueue,
    stacks: RefCell<StackPool>,
    timers: RefCell<Timers>,
    /// The ULT being resumed; null between ULTs.
    pub(crate) current: Cell<*const Task>,
    /// A ULT other than a background one yielded: a background ULT gets the
    /// next turn, so helpers progress while ranks poll by yielding.
    background_turn: Cell<bool>,
    /// Pollers' turns since the worker last gave its CPU away (see
    /// [`ReadyProbe::cpu_yield_due`]).
    polls_since_cpu_yield: Cell<usize>,
    /// Program polls answered without a switch since the last one that
    /// switched (see [`poll_switch_due`]).
    polls_without_switch: Cell<u32>,
    /// ULTs parked until a bell rings ([`crate::bell::wait_in_ult`]): looked
    /// at between ULTs, slept on when idle.
    bell_waiters: RefCell<Vec<(Bell, Arc<Task>)>>,
    /// This thread's `errno` (see [`crate::Caller`]): its address is fixed
    /// for the thread's life, and a restored thread gets its FS base back.
    pub(crate) errno: *mut libc::c_int,
}

thread_local! {
    static WORKER: Cell<*const WorkerCtx> = const { Cell::new(std::ptr::null()) };
}

#[inline]
pub(crate) fn with_ctx<R>(f: impl FnOnce(&WorkerCtx) -> R) -> Option<R> {
    let ptr = WORKER.with(|w| w.get());
    if ptr.is_null() {
        None
    } else {
        // SAFETY: the pointer is set by `WorkerCtx::run` to a context living on the
        // worker thread's stack for the whole loop, and cleared before it is dropped.
        Some(f(unsafe { &*ptr }))
    }
}

#[inline]
pub(crate) fn current_task_ptr() -> Option<*const Task> {
    with_ctx(|ctx| ctx.current.get()).filter(|p| !p.is_null())
}

pub(crate) fn current_task() -> Option<Arc<Task>> {
    current_task_ptr().map(|p| {
        // SAFETY: `p` is the task the worker is resuming; the worker holds an `Arc`
        // to it for the duration of the resume, so the count is at least 1.
        unsafe {
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        }
    })
}

/// Whether the caller's worker gives its CPU away when idle (other threads
/// or processes share its CPUs); false outside a worker.
pub fn yields_when_idle() -> bool {
    with_ctx(|ctx| ctx.shared.config.yields_when_idle()).unwrap_or(false)
}

/// Index of the worker running the caller, if the caller is on a worker thread.
pub fn current_worker() -> Option<usize> {
    with_ctx(|ctx| ctx.index)
}

/// True if another ULT of the caller's worker is ready to run (used by polling loops
/// to decide between yielding and spinning).
pub fn has_ready_ults() -> bool {
    with_ctx(|ctx| ctx.has_ready()).unwrap_or(false)
}

/// Program polls (a window flush that finds nothing to wait for) answered
/// without a switch while no other ULT is ready: a switch per poll cost more
/// than the poll itself; one every so many still turns timers and progress.
const POLLS_PER_SWITCH: u32 = 64;

/// Counts a program's poll that needs no switch: true when no other ULT is
/// ready and [`POLLS_PER_SWITCH`] polls have not gone by yet. False (outside
/// a ULT too) counts nothing, so the caller's [`crate::yield_for_poll`] then
/// switches.
#[inline]
pub fn poll_without_switch() -> bool {
    with_ctx(|ctx| {
        let n = ctx.polls_without_switch.get() + 1;
        if ctx.current.get().is_null() || ctx.has_ready() || n >= POLLS_PER_SWITCH {
            return false;
        }
        ctx.polls_without_switch.set(n);
        true
    })
    .unwrap_or(false)
}

/// Whether a program's poll should switch ULTs now: another ULT is ready, or
/// [`POLLS_PER_SWITCH`] polls went by without one. Outside a ULT: always.
/// A switch starts the count again.
#[inline]
pub(crate) fn poll_switch_due() -> bool {
    if poll_without_switch() {
        return false;
    }
    with_ctx(|ctx| {
        if !ctx.current.get().is_null() {
            ctx.polls_without_switch.set(0);
        }
    });
    true
}

/// The caller's worker, looked up once: a polling loop asks it "anything ready?"
/// without a thread-local lookup per turn (which costs a call to `__tls_get_addr`
/// when this crate lives in a dynamically loaded library such as libmpi).
#[derive(Clone, Copy)]
pub(crate) struct ReadyProbe(*const WorkerCtx);

impl ReadyProbe {
    /// `None` outside a ULT.
    pub(crate) fn current() -> Option<ReadyProbe> {
        current_task_ptr()?;
        with_ctx(|ctx| ReadyProbe(ctx as *const WorkerCtx))
    }

    pub(crate) fn has_ready(&self) -> bool {
        // SAFETY: a ULT never leaves its worker, whose context outlives every ULT
        // it runs; the probe is only used by the ULT that created it.
        unsafe { (*self.0).has_ready() }
    }

    /// Whether a waiter should give its CPU away between polls
    /// ([`crate::Builder::yield_when_idle`]).
    pub(crate) fn yields_when_idle(&self) -> bool {
        // SAFETY: as in `has_ready`.
        let ctx = unsafe { &*self.0 };
        ctx.shared.config.yields_when_idle()
    }

    /// Whether a poller that shares its CPU with other threads should give it
    /// away now: once per eight passes over the worker's ready ULTs. Counted per
    /// worker: each of 16,000 polling ranks yielding every eighth turn of its
    /// own made 2,000 trips through the kernel's scheduler per pass.
    pub(crate) fn cpu_yield_due(&self) -> bool {
        // SAFETY: as in `has_ready`.
        let ctx = unsafe { &*self.0 };
        let n = ctx.polls_since_cpu_yield.get() + 1;
        if n >= 8 * ctx.queue.len().max(1) {
            ctx.polls_since_cpu_yield.set(0);
            true
        } else {
            ctx.polls_since_cpu_yield.set(n);
            false
        }
    }

    /// Whether a network registered progress hooks.
    pub(crate) fn has_progress_hooks(&self) -> bool {
        // SAFETY: as in `has_ready`.
        let ctx = unsafe { &*self.0 };
        ctx.shared.has_progress_hooks()
    }

    /// Polls the progress hooks on behalf of the worker; returns whether any
    /// moved.
    pub(crate) fn poll_progress(&self) -> bool {
        // SAFETY: as in `has_ready`.
        let ctx = unsafe { &*self.0 };
        ctx.poll_progress()
    }
}

/// Spawns a ULT on the caller's own worker (or worker 0 outside a worker).
pub fn spawn_local<T, F>(f: F) -> crate::JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (shared, index) = with_ctx(|ctx| (ctx.shared.clone(), ctx.index))
        .expect("spawn_local called outside a scheduler worker");
    crate::Handle { shared }.spawn_on(index, f)
}

pub(crate) fn add_bell_waiter(bell: Bell, task: Arc<Task>) {
    with_ctx(|ctx| ctx.bell_waiters.borrow_mut().push((bell, task)))
        .expect("bell waiter registered outside a worker");
}

pub(crate) fn remove_bell_waiter(task: &Arc<Task>) {
    with_ctx(|ctx| {
        ctx.bell_waiters
            .borrow_mut()
            .retain(|(_, t)| !Arc::ptr_eq(t, task))
    });
}

pub(crate) fn add_timer(deadline: Instant, task: Arc<Task>) {
    with_ctx(|ctx| ctx.timers.borrow_mut().add(deadline, task))
        .expect("timer registered outside a worker");
}

/// Makes a woken or new ULT runnable on its home worker.
pub(crate) fn schedule(task: Arc<Task>) {
    let home = task.home;
    let local = with_ctx(|ctx| {
        if ctx.index == home && Arc::ptr_eq(&ctx.shared, &task.scheduler) {
            ctx.queue.push(task.clone());
            true
        } else {
            false
        }
    })
    .unwrap_or(false);
    if !local {
        let worker = &task.scheduler.workers[home];
        worker.inbox.push(task.clone());
        worker.sleeper.wake();
    }
}

impl WorkerCtx {
    pub(crate) fn new(index: usize, shared: Arc<Shared>) -> WorkerCtx {
        let stack_size = shared.config.stack_size;
        WorkerCtx {
            index,
            shared,
            queue: LocalQueue::default(),
            stacks: RefCell::new(StackPool::new(stack_size)),
            timers: RefCell::new(Timers::default()),
            current: Cell::new(std::ptr::null()),
            background_turn: Cell::new(false),
            polls_since_cpu_yield: Cell::new(0),
            polls_without_switch: Cell::new(0),
            bell_waiters: RefCell::new(Vec::new()),
            // SAFETY: no preconditions; `new` runs on the worker's own thread.
            errno: unsafe { libc::__errno_location() },
        }
    }

    #[inline]
    fn has_ready(&self) -> bool {
        !self.queue.is_empty() || !self.shared.workers[self.index].inbox.is_empty()
    }

    /// The worker loop. Returns once the scheduler shuts down and nothing is
    /// runnable. A panic that escapes it (the scheduler's own code, a progress
    /// hook) ends the process: the ULTs of this worker could never run again.
    pub(crate) fn run(&self) {
        crate::fault::ensure_alt_stack();
        if let Err(panic) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_loop()))
        {
            let msg = crate::fault::panic_message(panic.as_ref()).unwrap_or_default();
            let during = match current_task_ptr() {
                // SAFETY: the task being resumed when the panic escaped is still
                // referenced by the unwound resume's caller chain: it was leaked.
                Some(t) => format!(
                    " while running {}",
                    crate::fault::ult_name(unsafe { (*t).local.get() })
                ),
                None => String::new(),
            };
            crate::fault::fatal(format_args!(
                "worker {} failed{during}: {msg}; ending the job",
                self.index
            ));
        }
    }

    fn run_loop(&self) {
        WORKER.with(|w| w.set(self as *const WorkerCtx));
        let me = &self.shared.workers[self.index];
        let config = &self.shared.config;
        let mut runs_since_poll = 0u32;
        let mut idle_since: Option<Instant> = None;
        // The last sleep ended by its timeout: what the next poll finds came
        // without a ring (`--net-stats`).
        let mut after_timeout = false;
        loop {
            self.queue.drain(&me.inbox);
            self.fire_timers();
            self.wake_bell_waiters();
            if let Some(task) = self.queue.pop(self.background_turn.replace(false)) {
                // A ULT its timer woke (one that polls something between
                // sleeps) keeps the worker idle: otherwise such a poller
                // would keep it yielding its CPU for good (see PROGRESS_POLL).
                if !task.timer_wake.replace(false) {
                    idle_since = None;
                }
                self.resume(task);
                runs_since_poll += 1;
                if runs_since_poll >= RUNS_PER_POLL {
                    runs_since_poll = 0;
                    self.poll_progress();
                }
                continue;
            }
            runs_since_poll = 0;
            if self.poll_progress() {
                if std::mem::take(&mut after_timeout) {
                    count(Count::TimedOutThenMoved);
                }
                idle_since = None;
                continue;
            }
            after_timeout = false;
            if self.shared.shutdown.load(Ordering::Acquire) && me.inbox.is_empty() {
                break;
            }
            let now = Instant::now();
            let since = *idle_since.get_or_insert(now);
            if !config.yields_when_idle() && now - since < config.idle_spin {
                std::hint::spin_loop();
                continue;
            }
            let sleep_now = config.yields_when_idle() && self.shared.hooks_ring_for_everything();
            if self.shared.has_progress_hooks()
                && !sleep_now
                && now - since < crate::idle::PROGRESS_POLL
            {
                std::thread::yield_now();
                continue;
            }
            let timeout = self.sleep_timeout(now);
            let mut armed = Vec::new();
            self.shared.arm_bells(&mut armed);
            let mut bells: Vec<Bell> = self.bell_waiters.borrow().iter().map(|(b, _)| *b).collect();
            for a in &armed {
                a.bells(&mut bells);
            }
            // What was sent before the bells were armed rang none of them.
            if !bells.is_empty() && self.poll_progress() {
                idle_since = None;
                continue;
            }
            let woke = me.sleeper.sleep(timeout, &bells, || {
                !me.inbox.is_empty()
                    || self.shared.shutdown.load(Ordering::Acquire)
                    // A hook added since the timeout was chosen (see add_progress_hook).
                    || (timeout.is_none() && self.shared.has_progress_hooks())
            });
            drop(armed);
            if !bells.is_empty() && woke.is_some() {
                count(Count::Sleep);
                match woke {
                    Some(Woke::Bell) => count(Count::Rung),
                    Some(Woke::Timeout) => {
                        count(Count::TimedOut);
                        after_timeout = true;
                    }
                    _ => {}
                }
            }
            // Still idle unless the next round finds work: the worker naps
            // again instead of going back to yielding its CPU (see PROGRESS_POLL).
        }
        WORKER.with(|w| w.set(std::ptr::null()));
    }

    fn sleep_timeout(&self, now: Instant) -> Option<Duration> {
        let timer = self
            .timers
            .borrow()
            .next_deadline()
            .map(|d| d.saturating_duration_since(now));
        // Drivers without a way to wake us are polled at least every millisecond.
        let progress_cap = if self.shared.has_progress_hooks() {
            Some(Duration::from_millis(1))
        } else {
            None
        };
        match (timer, progress_cap) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn fire_timers(&self) {
        if self.timers.borrow().is_empty() {
            return;
        }
        let due = self.timers.borrow_mut().expired(Instant::now());
        for task in due {
            task.timer_wake.set(true);
            task.unpark();
        }
    }

    fn poll_progress(&self) -> bool {
        self.shared.poll_progress(self.index)
    }

    /// Unparks the ULTs whose bell rang.
    fn wake_bell_waiters(&self) {
        if self.bell_waiters.borrow().is_empty() {
            return;
        }
        self.bell_waiters.borrow_mut().retain(|(bell, task)| {
            if bell.rang() {
                task.unpark();
                false
            } else {
                true
            }
        });
    }

    fn resume(&self, task: Arc<Task>) {
        // SAFETY: only the home worker touches `body`; we are that worker (tasks are
        // only queued on their home worker) and no other reference to `body` exists.
        let body = unsafe { &mut *task.body.get() };
        self.current.set(Arc::as_ptr(&task));
        if let Body::New { .. } = body {
            let Body::New { func, stack_size } = std::mem::replace(body, Body::Finished) else {
                unreachable!()
            };
            *body = Body::Running(self.new_ult(&task, func, stack_size));
        }
        let Body::Running(ult) = body else {
            return;
        };
        let canary = task.stack.get().canary;
        if let Some(hook) = crate::park::resume_hook() {
            hook(task.local.get());
        }
        let result = ult.resume(());
        if canary != 0 && !crate::stack::canary_intact(canary) {
            crate::fault::canary_overwritten(&task);
        }
        self.current.set(std::ptr::null());
        match result {
            CoroutineResult::Yield(Suspend::Yield) => {
                if !task.background {
                    self.background_turn.set(true);
                }
                self.queue.push(task)
            }
            CoroutineResult::Yield(Suspend::Park) => {
                if !task.finish_park() {
                    self.queue.push(task);
                }
            }
            CoroutineResult::Return(()) => {
                let Body::Running(ult) = std::mem::replace(body, Body::Finished) else {
                    unreachable!()
                };
                if let UltStack::Pooled(stack) = ult.into_stack() {
                    self.stacks.borrow_mut().give_back(stack);
                }
                self.shared.live.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    fn new_ult(&self, task: &Arc<Task>, func: Box<dyn FnOnce() + Send>, stack_size: usize) -> Ult {
        let stack = if stack_size == self.stacks.borrow().usable() {
            self.stacks
                .borrow_mut()
                .take()
                .map(UltStack::Pooled)
                .map_err(|e| (e.bytes, e.error))
        } else {
            DefaultStack::new(stack_size)
                .map(UltStack::Own)
                .map_err(|e| (stack_size, e))
        };
        let stack = stack.unwrap_or_else(|(bytes, error)| {
            crate::fault::fatal(format_args!(
                "cannot map stacks for more user-level threads ({} mapped in this process, \
                 {bytes} more bytes asked): {}",
                crate::stack::stacks_mapped(),
                crate::limits::explain_map_failure(bytes, &error)
            ))
        });
        task.stack.set(stack.info(stack_size));
        let task_ptr = Arc::as_ptr(task);
        Ult::with_stack(stack, move |yielder, ()| {
            // SAFETY: the worker holds an `Arc` to the task while resuming it, and
            // this closure only runs inside such a resume.
            unsafe { (*task_ptr).yielder.set(yielder as *const _) };
            func();
        })
    }
}
