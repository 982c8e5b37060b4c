//! Park and unpark for whoever is running: a ULT, or a plain OS thread.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

use crate::task::{Suspend, Task};
use crate::worker;

/// Wakes one parked execution context (a ULT, or a plain OS thread blocked in
/// [`park`]). Cloneable and sendable to any thread.
#[derive(Clone)]
pub struct Unparker(Target);

#[derive(Clone)]
enum Target {
    /// Waking queues the ULT on its home worker.
    Ult(Arc<Task>),
    Thread(std::thread::Thread),
}

impl Unparker {
    pub fn unpark(&self) {
        match &self.0 {
            Target::Ult(task) => task.unpark(),
            Target::Thread(thread) => thread.unpark(),
        }
    }

    /// Whether the context is parked now, not woken since (a ULT woken but
    /// not yet run again is not). A plain OS thread cannot be looked at: it
    /// counts as parked.
    pub fn is_parked(&self) -> bool {
        match &self.0 {
            Target::Ult(task) => task.is_parked(),
            Target::Thread(_) => true,
        }
    }

    /// Whether two unparkers wake the same context.
    pub fn same_as(&self, other: &Unparker) -> bool {
        match (&self.0, &other.0) {
            (Target::Ult(a), Target::Ult(b)) => Arc::ptr_eq(a, b),
            (Target::Thread(a), Target::Thread(b)) => a.id() == b.id(),
            _ => false,
        }
    }
}

impl std::fmt::Debug for Unparker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Target::Ult(t) => write!(f, "Unparker(ULT on worker {})", t.home),
            Target::Thread(t) => write!(f, "Unparker(thread {:?})", t.id()),
        }
    }
}

/// The unparker of the caller.
pub fn current() -> Unparker {
    match worker::current_task() {
        Some(task) => Unparker(Target::Ult(task)),
        None => Unparker(Target::Thread(std::thread::current())),
    }
}

/// A number naming the caller's execution context (its ULT, or its OS thread)
/// among those alive now: for "is this held by me?" checks. Never 0.
pub fn context_id() -> usize {
    match worker::current_task_ptr() {
        Some(task) => task as usize,
        // The address of a thread-local is distinct for every live thread, and
        // never that of a task, which lives on the heap.
        None => THREAD_LOCAL_WORD.with(|w| w as *const _ as usize),
    }
}

/// True when called from inside a ULT.
pub fn in_ult() -> bool {
    worker::current_task_ptr().is_some()
}

thread_local! {
    /// The local word of a plain OS thread (one that runs no ULT right now).
    static THREAD_LOCAL_WORD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The note of a plain OS thread.
    static THREAD_NOTE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The caller's note (0 if none): a second local word, its ULT's or its OS
/// thread's, for what it is doing.
pub fn ult_note() -> usize {
    match worker::current_task_ptr() {
        // SAFETY: as in `set_ult_local`.
        Some(task) => unsafe { (*task).note.get() },
        None => THREAD_NOTE.with(|w| w.get()),
    }
}

/// Where a note was set by [`Caller::note_unless_noted`]: clearing it needs no
/// lookup of the caller.
pub struct NoteCell(*const std::cell::Cell<usize>);

impl NoteCell {
    /// Clears the note. Call from the thread of execution that set it, while
    /// it lives (its ULT, or its OS thread).
    #[inline]
    pub fn clear(self) {
        // SAFETY: the cell is the note of the caller's ULT (whose task lives
        // while the ULT runs) or of its OS thread (alive while it runs), and
        // only that ULT or thread touches it.
        unsafe { (*self.0).set(0) }
    }
}

/// The caller of an entry point of the runtime, looked up once (one
/// thread-local access, which in a dynamically loaded library is a call to
/// `__tls_get_addr`): its ULT if it is one, and where its OS thread keeps
/// `errno`, which a worker looks up once for all its ULTs.
#[derive(Clone, Copy)]
pub struct Caller {
    task: *const Task,
    errno: *mut libc::c_int,
}

impl Caller {
    #[inline]
    pub fn current() -> Caller {
        match worker::with_ctx(|ctx| (ctx.current.get(), ctx.errno)) {
            Some((task, errno)) if !task.is_null() => Caller { task, errno },
            // SAFETY: `__errno_location` has no preconditions.
            _ => Caller {
                task: std::ptr::null(),
                errno: unsafe { libc::__errno_location() },
            },
        }
    }

    /// Whether the caller is a ULT.
    #[inline]
    pub fn in_ult(&self) -> bool {
        !self.task.is_null()
    }

    /// The caller's thread's `errno`, valid while the caller runs.
    #[inline]
    pub fn errno(&self) -> *mut libc::c_int {
        self.errno
    }

    /// Notes `value` as what the caller does unless it has a note already;
    /// where the note was set, to clear it.
    #[inline]
    pub fn note_unless_noted(&self, value: usize) -> Option<NoteCell> {
        let cell: *const std::cell::Cell<usize> = if self.task.is_null() {
            THREAD_NOTE.with(|w| w as *const _)
        } else {
            // SAFETY: as in `set_ult_local`: the task lives while its ULT runs.
            unsafe { &(*self.task).note }
        };
        // SAFETY: see `NoteCell::clear`.
        let note = unsafe { &*cell };
        if note.get() != 0 {
            return None;
        }
        note.set(value);
        Some(NoteCell(cell))
    }
}

/// The caller's local word, if it is a ULT (one lookup).
#[inline]
pub fn ult_local_of_ult() -> Option<usize> {
    // SAFETY: as in `set_ult_local`.
    worker::current_task_ptr().map(|task| unsafe { (*task).local.get() })
}

/// Sets the caller's local word: its ULT's, or, outside a ULT, its OS thread's
/// (a program's main thread that is itself a rank).
pub fn set_ult_local(value: usize) {
    match worker::current_task_ptr() {
        // SAFETY: the task is live while it runs, and `local` is only touched by the
        // ULT itself on its home worker.
        Some(task) => unsafe { (*task).local.set(value) },
        None => THREAD_LOCAL_WORD.with(|w| w.set(value)),
    }
}

/// A function every worker calls just before it resumes a ULT, with that
/// ULT's local word (0 if never set): for state kept per ULT context on the
/// worker's OS thread itself. At most one; set once, before ULTs run.
static RESUME_HOOK: std::sync::OnceLock<fn(usize)> = std::sync::OnceLock::new();

/// Installs the resume hook (see [`RESUME_HOOK`]); false if one already is.
pub fn set_resume_hook(hook: fn(usize)) -> bool {
    RESUME_HOOK.set(hook).is_ok()
}

pub(crate) fn resume_hook() -> Option<fn(usize)> {
    RESUME_HOOK.get().copied()
}

/// A function every ULT calls on itself when it comes back from [`park`],
/// [`park_timeout`] or [`yield_now`], with its local word: where a user of this
/// crate makes the ULT leave what it was doing (it may unwind the ULT's stack
/// from there, since no lock of this crate is held then). At most one; set
/// once, before ULTs run.
static AFTER_SUSPEND_HOOK: std::sync::OnceLock<fn(usize)> = std::sync::OnceLock::new();

/// Installs the after-suspend hook (see [`AFTER_SUSPEND_HOOK`]); false if one
/// already is.
pub fn set_after_suspend_hook(hook: fn(usize)) -> bool {
    AFTER_SUSPEND_HOOK.set(hook).is_ok()
}

/// Calls the after-suspend hook in the ULT `task` that has just resumed.
fn after_suspend(task: &Task) {
    if let Some(hook) = AFTER_SUSPEND_HOOK.get() {
        hook(task.local.get());
    }
}

/// The caller's local word (see [`set_ult_local`]): 0 if never set.
#[inline]
pub fn ult_local() -> usize {
    match worker::current_task_ptr() {
        // SAFETY: as in `set_ult_local`.
        Some(task) => unsafe { (*task).local.get() },
        None => THREAD_LOCAL_WORD.with(|w| w.get()),
    }
}

/// Blocks the caller until its unparker is used. As with `std::thread::park`, a
/// wake-up that came before the park is not lost, and spurious returns are possible:
/// callers re-check their condition in a loop.
pub fn park() {
    match worker::current_task_ptr() {
        // SAFETY: the pointer comes from the worker's `current` slot, which holds a
        // live reference to the task for as long as it runs on this worker.
        Some(task) => unsafe {
            park_ult(&*task);
            after_suspend(&*task);
        },
        None => park_thread(None),
    }
}

/// How long a plain OS thread sleeps between its own polls of the network.
const THREAD_POLL: Duration = Duration::from_micros(100);

/// How long it sleeps between polls once they have found nothing for about
/// [`THREAD_POLLS_BEFORE_BACKOFF`] rounds: the runtime's own main thread waits
/// for the ranks this way for the whole run, and waking every 100 us in every
/// process kept the kernel's own threads from a 2-CPU machine's CPUs.
const THREAD_POLL_BACKOFF: Duration = Duration::from_millis(1);
const THREAD_POLLS_BEFORE_BACKOFF: u32 = 500;

/// Polls in a row that find nothing before a thread that polls while parked
/// (see [`poll_while_parked`]) sleeps between them as the others do: tens of
/// milliseconds of polling, so a message in a ping-pong or a collective is
/// met at once, and a long wait still gives its CPU back.
const SPINNING_POLLS: u32 = 20_000;

thread_local! {
    /// Polls of this thread in a row that found nothing.
    static THREAD_POLL_MISSES: Cell<u32> = const { Cell::new(0) };
    /// Whether this thread polls on instead of sleeping (poll_while_parked).
    static POLLS_WHILE_PARKED: Cell<bool> = const { Cell::new(false) };
}

/// Makes the calling OS thread, when it parks, poll the network again at once
/// rather than sleep between polls, for [`SPINNING_POLLS`] polls in a row that
/// find nothing. For a rank that is a program's own thread (a program started
/// directly, mpi4py): it waits for messages as MPICH's and Open MPI's
/// processes do, by polling, where sleeping 100 us between polls put ~50 us
/// on every message. Not for threads that wait long (the runtime's main
/// thread waits for the ranks for the whole run): they would hold a CPU.
pub fn poll_while_parked(on: bool) {
    POLLS_WHILE_PARKED.with(|p| p.set(on));
}

/// Parks a plain OS thread. Where a network registered progress hooks, what
/// it waits for may only arrive if somebody polls them, and every worker may
/// be held by a ULT blocked in a system call: the thread polls them itself
/// and sleeps briefly in between (returns are spurious by contract).
fn park_thread(timeout: Option<Duration>) {
    match crate::scheduler::poll_progress_foreign() {
        None => match timeout {
            Some(t) => std::thread::park_timeout(t),
            None => std::thread::park(),
        },
        Some(true) => THREAD_POLL_MISSES.with(|m| m.set(0)),
        Some(false) => {
            let misses = THREAD_POLL_MISSES.with(|m| {
                m.set(m.get().saturating_add(1));
                m.get()
            });
            if misses <= SPINNING_POLLS && POLLS_WHILE_PARKED.with(|p| p.get()) {
                // A spurious return: the caller looks again, then polls again.
                std::hint::spin_loop();
                return;
            }
            let poll = if misses > THREAD_POLLS_BEFORE_BACKOFF {
                THREAD_POLL_BACKOFF
            } else {
                THREAD_POLL
            };
            std::thread::park_timeout(timeout.map_or(poll, |t| t.min(poll)))
        }
    }
}

/// Like [`park`], but returns after `timeout` at the latest.
pub fn park_timeout(timeout: Duration) {
    match worker::current_task() {
        Some(task) => {
            worker::add_timer(std::time::Instant::now() + timeout, task.clone());
            park_ult(&task);
            after_suspend(&task);
        }
        None => park_thread(Some(timeout)),
    }
}

fn park_ult(task: &Task) {
    if task.take_token() {
        return;
    }
    suspend(task, Suspend::Park);
    task.after_park();
}

/// Lets the other ready ULTs of this worker run. Outside a ULT, yields the thread.
pub fn yield_now() {
    match worker::current_task_ptr() {
        // SAFETY: as in `park`.
        Some(task) => unsafe {
            suspend(&*task, Suspend::Yield);
            after_suspend(&*task);
        },
        None => std::thread::yield_now(),
    }
}

/// A program's poll of state another ULT may change (MPI_Win_flush, a test):
/// lets the worker's other ready ULTs run, and when none is ready yields only
/// now and then, so the worker's timers and progress hooks still turn.
#[inline]
pub fn yield_for_poll() {
    if worker::poll_switch_due() {
        yield_now();
    }
}

fn suspend(task: &Task, why: Suspend) {
    let yielder = task.yielder.get();
    debug_assert!(!yielder.is_null());
    // SAFETY: `yielder` was stored by the coroutine's entry closure and points into
    // this coroutine's own stack, which is live while the coroutine runs; we are
    // running inside it, on its home worker.
    unsafe { (*yielder).suspend(why) };
}

/// Wakes every unparker of the list.
pub fn unpark_all(list: impl IntoIterator<Item = Unparker>) {
    for u in list {
        u.unpark();
    }
}
