//! The checkpoint service of seed 003 (CRaaS): each rank keeps named
//! checkpoints of indices (`long`) and arrays (bytes), updates them, and
//! commits each checkpoint as a whole. A service process (`mpcrs-ckptd`)
//! holds the committed data in memory, updates arrays in place with only the
//! blocks that changed, and flushes them to files in the global checkpoint
//! directory now and then; a restart reads memory first and files where
//! memory lost them.
//!
//! Owns: the names ([`names`]), a checkpoint's committed state and the change
//! that one commit makes to it ([`data`]), block hashes ([`blocks`]), the
//! frames between a process and a service ([`wire`]), the flushed files
//! ([`files`]), when to flush ([`flush`]), and the service's store and serving
//! loop ([`service`]).
//!
//! Must not touch: MPI, the scheduler or the fabric (the runtime's client
//! stages commits and carries frames from its helper tasks), or the launcher
//! (which starts the service).

pub mod blocks;
pub mod data;
pub mod files;
pub mod flush;
pub mod names;
pub mod service;
pub mod wire;

pub use data::{ArrayChange, Change, Checkpoint};
pub use flush::FlushPolicy;
pub use names::NameError;
