//! A ULT: its park state, its coroutine and the handle its spawner joins on.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use corosensei::{Coroutine, Yielder};

use crate::stack::{StackInfo, UltStack};

use crate::sync::Event;

/// Why a ULT handed control back to its worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Suspend {
    /// Still runnable: go to the back of the run queue.
    Yield,
    /// Wants to sleep until [`Task::unpark`]; the worker finishes the transition.
    Park,
}

pub(crate) type Ult = Coroutine<(), Suspend, (), UltStack>;
pub(crate) type UltYielder = Yielder<(), Suspend>;

/// Park states. The transition to `PARKED` is made by the worker *after* the ULT's
/// stack is switched out, so an unparker can never resume a ULT that is still running.
const RUNNING: u8 = 0;
const NOTIFIED: u8 = 1;
const PARKED: u8 = 2;

pub(crate) enum Body {
    New {
        func: Box<dyn FnOnce() + Send>,
        stack_size: usize,
    },
    Running(Ult),
    Finished,
}

pub(crate) struct Task {
    state: AtomicU8,
    pub(crate) home: usize,
    pub(crate) body: UnsafeCell<Body>,
    pub(crate) yielder: Cell<*const UltYielder>,
    /// One word of ULT-local storage (the runtime keeps its rank context there).
    pub(crate) local: Cell<usize>,
    /// A second word, for a note of what the ULT is doing (the runtime keeps
    /// the MPI call a rank is in), read by others only as a hint.
    pub(crate) note: Cell<usize>,
    pub(crate) scheduler: Arc<crate::scheduler::Shared>,
    /// A background ULT (a helper): its worker runs it only when no other ULT
    /// is ready, or for one turn after another yields.
    pub(crate) background: bool,
    /// Set when the ULT first runs.
    pub(crate) stack: Cell<StackInfo>,
    /// Its worker's timer woke it last (a sleep or a wait with a timeout
    /// ended), not another ULT or thread: its next run is no sign of work
    /// for the worker's idle clock (see `WorkerCtx::run_loop`).
    pub(crate) timer_wake: Cell<bool>,
}

// SAFETY: `body`, `yielder`, `local`, `stack` and `timer_wake` are only touched on the home worker's OS thread (the
// worker resumes the coroutine, and `yielder` is read only by code running inside
// that coroutine, and `local` only by that code). Every other thread only uses the atomic `state` and `home`.
unsafe impl Send for Task {}
// SAFETY: see `Send` above.
unsafe impl Sync for Task {}

impl Task {
    pub(crate) fn new(
        scheduler: Arc<crate::scheduler::Shared>,
        home: usize,
        func: Box<dyn FnOnce() + Send>,
        stack_size: usize,
        background: bool,
    ) -> Arc<Task> {
        Arc::new(Task {
            state: AtomicU8::new(RUNNING),
            home,
            body: UnsafeCell::new(Body::New { func, stack_size }),
            yielder: Cell::new(std::ptr::null()),
            local: Cell::new(0),
            note: Cell::new(0),
            scheduler,
            background,
            stack: Cell::new(StackInfo::default()),
            timer_wake: Cell::new(false),
        })
    }

    /// Consumes a pending wake-up token, if any. Called by the ULT itself.
    pub(crate) fn take_token(&self) -> bool {
        self.state
            .compare_exchange(NOTIFIED, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Called by the ULT when it resumes after a park: consumes the token that woke
    /// it (and any that arrived since). A read-modify-write, so it acquires every
    /// unparker's writes.
    pub(crate) fn after_park(&self) {
        self.state.swap(RUNNING, Ordering::AcqRel);
    }

    /// Called by the home worker once a ULT suspended with [`Suspend::Park`].
    /// Returns false if a wake-up arrived meanwhile and the ULT must run again (it
    /// consumes the token itself in [`Task::after_park`]).
    pub(crate) fn finish_park(&self) -> bool {
        self.state
            .compare_exchange(RUNNING, PARKED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Whether the ULT is parked, with no wake-up since.
    pub(crate) fn is_parked(&self) -> bool {
        self.state.load(Ordering::Acquire) == PARKED
    }

    /// Wakes the ULT: leaves a token if it is running, or queues it on its home
    /// worker if it is parked. Always a read-modify-write on the state: a plain load
    /// that saw a token already there could let the waker's earlier writes stay
    /// invisible to a ULT consuming that older token (store-load reordering).
    pub(crate) fn unpark(self: &Arc<Self>) {
        if self.state.swap(NOTIFIED, Ordering::AcqRel) == PARKED {
            crate::worker::schedule(self.clone());
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        // A ULT dropped while suspended (a deadlocked rank at shutdown) cannot be
        // unwound here: unwinding would run its frames on whatever thread drops the
        // last reference. Its stack is leaked instead.
        if let Body::Running(ult) = std::mem::replace(self.body.get_mut(), Body::Finished) {
            if !ult.done() {
                std::mem::forget(ult);
            }
        }
    }
}

/// Result slot shared by a spawned ULT and its [`JoinHandle`].
pub(crate) struct JoinSlot<T> {
    pub(crate) result: Mutex<Option<std::thread::Result<T>>>,
    pub(crate) done: Event,
}

/// Waits for a ULT's result, from another ULT or from any OS thread.
pub struct JoinHandle<T> {
    pub(crate) slot: Arc<JoinSlot<T>>,
}

impl<T> JoinHandle<T> {
    /// Blocks (parks) until the ULT finished; `Err` carries its panic payload.
    pub fn join(self) -> std::thread::Result<T> {
        self.slot.done.wait();
        self.slot
            .result
            .lock()
            .unwrap()
            .take()
            .expect("ULT result taken twice")
    }

    /// True once the ULT returned or panicked.
    pub fn is_finished(&self) -> bool {
        self.slot.done.is_set()
    }
}
