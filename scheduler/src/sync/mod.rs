//! ULT-aware synchronisation. Every primitive first polls for a short, bounded time
//! (yielding to the worker's other ready ULTs, or spinning if there are none), then
//! registers its unparker and parks. They work on plain OS threads as well.

mod barrier;
mod condvar;
mod event;
mod mutex;
mod poll;
mod wait_list;

pub use barrier::{Barrier, BarrierWaitResult};
pub use condvar::Condvar;
pub use event::Event;
pub use mutex::{Mutex, MutexGuard};
pub use poll::{poll_until, spin_until, DEFAULT_POLL};
pub use wait_list::WaitList;
