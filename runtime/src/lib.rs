//! mpcrs: a thread-based MPI runtime. MPI ranks run as user-level threads of one
//! process on the MxN scheduler; ranks of a process exchange data by copying
//! directly between their buffers.
//!
//! Owns: MPI semantics (ranks, communicators, groups, matching, point-to-point,
//! collectives, one-sided communication, datatypes, reduction ops, error
//! classes and handlers), the
//! inter-process fabric (remote/), the checkpoint protocol (checkpoint/), the
//! ranks' side of application checkpoints (ft/ for FTI's API, craas/ for
//! checkpoints held in a service's memory), the processes' side of recovery
//! in place (recovery/: ranks leave their body for a new run of the job),
//! and the safe Rust API (`mpcrs::run`).
//!
//! Inside, three concepts import each other one way (runtime/tests/layout.rs):
//! MPI semantics (comm, p2p, coll, ...) use the fabric (remote/) and the
//! checkpoint protocol (checkpoint/); the fabric hands arriving messages to MPI
//! through `remote::Endpoint` and serves the protocol through
//! `checkpoint::network::JobNetwork`; all three build on config, process,
//! message, request and error.
//!
//! Must not touch: the scheduler's internals (it uses the public ULT, park and sync
//! API only), rail drivers (the network crates), checkpoint images (the cr crate,
//! which it drives), the launcher (mpcrs-launch, which it meets only through the
//! environment and PMI-2).
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     mpcrs::run(|world| {
//!         let mut sum = [0u64];
//!         world.all_reduce(&[world.rank() as u64], &mut sum, &mpcrs::Op::Sum)?;
//!         if world.rank() == 0 {
//!             println!("sum of ranks: {}", sum[0]);
//!         }
//!         Ok::<(), mpcrs::Error>(())
//!     })
//! }
//! ```

mod bindings;
pub mod checkpoint;
mod clock;
mod coll;
mod comm;
mod config;
pub mod consts;
pub mod craas;
mod datatype;
pub mod deadlock;
mod error;
pub mod ft;
mod group;
mod intercomm;
mod message;
mod op;
mod p2p;
mod process;
mod process_transport;
pub mod raw;
pub mod recovery;
mod remote;
mod request;
mod rma;
pub mod run;
mod scope;
mod universe;
mod waits;
mod x87;

pub use checkpoint::CrState;
/// Seconds since an arbitrary point (the same for the processes of a node), as
/// MPI_Wtime.
pub use clock::wtime;
pub use coll::SMALL_LIMIT as COLLECTIVE_SMALL_LIMIT;
pub use comm::Communicator;
pub use consts::{ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB, UNDEFINED};
pub use datatype::{bytes_of, bytes_of_mut, kind_size, Equivalence, Kind, Num, ValueIndex};
pub use error::{Error, ErrorClass, ErrorHandler, Result, FATAL_EXIT_CODE};
pub use group::{Comparison, Group};
pub use intercomm::ROOT;
/// Restores the process from `MPCRS_RESTORE` if set (before any thread starts).
pub use mpcrs_cr::restore::restore_if_asked;
pub use op::Op;
pub use p2p::EAGER_LIMIT;
pub use process::{abort_job, current_rank, rank_of_ult_word};
pub use process_transport::ProcessTransport;
pub use remote::this_node;
pub use request::Status;
pub use run::{adopt_calling_thread, release_calling_thread, run, run_with, JobConfig, RankExit};
pub use scope::{
    scope, test_all, test_any, test_some, wait_all, wait_any, wait_some_of, Request, Scope,
};

/// Lets the other ranks of the caller's worker run (sched_yield for ranks).
pub fn yield_now() {
    mpcrs_scheduler::yield_now()
}

/// Suspends the calling rank for `d`; the other ranks of its worker keep running.
pub fn sleep(d: std::time::Duration) {
    mpcrs_scheduler::sleep(d)
}

/// Resolution of [`wtime`] in seconds, as MPI_Wtick.
pub fn wtick() -> f64 {
    1e-9
}
