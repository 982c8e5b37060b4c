//! One-sided communication (MPI-3.1 chapter 11): windows, puts, gets,
//! accumulates and their synchronization, between ranks of one process and
//! across processes.
//!
//! - window.rs: one rank's window, the origin side of operations and the
//!   synchronization calls (fence, post/start/complete/wait, locks, flushes);
//! - memory.rs: the members' memory as the process sees it, checked, and
//!   operations applied to it;
//! - agent.rs: the ULT that serves a member's memory to other processes and
//!   keeps its lock;
//! - locks.rs: the lock's state;
//! - wire.rs: requests as bytes.
//!
//! Ranks of one process reach each other's windows with loads and stores;
//! ranks in other processes go through the target's agent, over the window's
//! own duplicates of its communicator with ordinary messages (any rail, the
//! same matching and ordering, the same checkpoint protocol).

mod agent;
mod allocation;
mod locks;
mod memory;
mod window;
mod wire;

pub use window::{Finish, Flavor, Memory, Window};
