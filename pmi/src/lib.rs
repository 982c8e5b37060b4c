//! PMI-2, the process-management interface through which the processes of a
//! job find each other: the wire protocol as MPICH's hydra and Slurm's
//! `srun --mpi=pmi2` speak it, the launcher's key-value store ([`Server`]) and a
//! process's side ([`Client`]). Only the commands a job needs are served:
//! fullinit, job-getid, kvs-put, kvs-get, kvs-fence, finalize, abort (and a
//! client asks another launcher's server for `PMI_process_mapping`).
//!
//! Owns: the PMI-2 messages, the job's key-value store and fence, and the
//! environment variables through which a launcher hands a process its
//! connection (`PMI_FD`, `PMI_PORT`, `PMI_RANK`, `PMI_SIZE`).
//!
//! Must not touch: how processes are started or placed (mpcrs-launch), or what
//! the entries mean (the signaling ring puts its addresses; MPI is not known
//! here). Both mpcrs-run and the runtime link this crate, so that a job started
//! by mpcrs-run or by Slurm goes through the same code.

mod client;
mod mapping;
mod server;
mod wire;

pub use client::{Client, PmiStream, ENV_FD, ENV_JOBID, ENV_PORT, ENV_RANK, ENV_SECRET, ENV_SIZE};
pub use mapping::process_mapping;
pub use server::{Ending, Server};
pub use wire::{decode, encode, read_message, Message};

/// A job's key-value store as a process sees it: entries put before a fence
/// are visible to every process after it.
pub trait KeyValueStore {
    fn put(&mut self, key: &str, value: &str) -> std::io::Result<()>;
    /// Returns once every process of the job has put its entries.
    fn fence(&mut self) -> std::io::Result<()>;
    fn get(&mut self, key: &str) -> std::io::Result<Option<String>>;
}
