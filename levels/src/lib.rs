//! Storage levels of checkpoint images, numbered as FTI numbers them: L1 each
//! process's image on node-local storage, L2 plus a copy on a partner process of
//! another host, L3 plus Reed-Solomon parity across a group of processes on
//! distinct hosts, L4 the job's global directory.
//!
//! Owns: the levels and their names ([`Level`]), which process keeps whose
//! copy and which processes encode together ([`placement`]), and the interface
//! through which a level moves data between processes ([`Transport`]): the
//! runtime implements it over its fabric, and [`memory::MemoryNetwork`]
//! implements it between threads, so that level logic is tested without MPI.
//!
//! Must not touch: MPI semantics or the fabric (it sees processes only through
//! [`Transport`]), or the image format and its commit (mpcrs-cr).

pub mod completion;
pub mod direct;
pub mod erasure;
pub mod level;
pub mod memory;
pub mod partner;
pub mod placement;
pub mod recovery;
pub mod schedule;
pub mod store;
pub mod transport;

pub use level::Level;
pub use schedule::Schedule;
pub use transport::{blocking, Io, PlainIo, Transport};
