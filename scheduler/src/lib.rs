//! MxN scheduler of user-level threads (ULTs) for the mpcrs MPI runtime.
//!
//! Owns: the worker OS threads (one per allowed CPU, pinned), their run queues,
//! the ULT stacks (corosensei coroutines on stacks pooled in large mappings), the
//! reports of a ULT's fault or overflow, park/unpark, timers, the ULT-aware synchronisation
//! primitives, the blocking-call offload pool, the progress hooks that the network
//! layer registers and the idle policy that puts workers to sleep in the kernel.
//!
//! Must not touch: MPI semantics, the network, checkpoint images. Those crates build
//! on this one (scheduler ← net ← runtime, scheduler ← cr ← runtime), never the
//! reverse.
//!
//! Rules every user of this crate relies on:
//! - A ULT stays on the worker it started on. Thread-local storage therefore stays
//!   valid across switches (errno, Rust std TLS).
//! - No ULT switch happens while a `thread_local!` borrow or a std lock is held by
//!   this crate; callers must respect the same rule around [`park`] and [`yield_now`].
//! - Every primitive here also works on a plain OS thread (it parks the thread), so
//!   the main thread can wait on ULTs with the same types.

pub mod bell;
mod blocking;
mod fault;
pub mod futex;
mod idle;
mod limits;
mod park;
mod progress;
mod queue;
mod scheduler;
mod stack;
pub mod sync;
mod task;
mod timer;
pub mod topology;
mod worker;

pub use blocking::{blocking_threads, run_blocking};
pub use fault::{panic_message, set_code_namer, set_ult_label, CodeNamer, UltLabel};
pub use idle::{sleep_counts, SleepCounts};
pub use limits::{mappings, max_map_count};
pub use park::{
    context_id, current, in_ult, park, park_timeout, poll_while_parked, set_after_suspend_hook,
    set_resume_hook, set_ult_local, ult_local, ult_local_of_ult, ult_note, unpark_all,
    yield_for_poll, yield_now, Caller, NoteCell, Unparker,
};
pub use progress::{Progress, FOREIGN_THREAD};
pub use scheduler::{Builder, Handle, Scheduler};
pub use task::JoinHandle;
pub use timer::sleep;
pub use topology::{Binding, CpuPlace, Topology};
pub use worker::{
    current_worker, has_ready_ults, poll_without_switch, spawn_local, yields_when_idle,
};

/// Default ULT stack size. Stacks are reserved, not committed: an idle rank costs
/// only the pages it touched (see `stack.rs` for how they are laid out and
/// protected against overflow).
pub const DEFAULT_STACK_SIZE: usize = 1 << 20;
