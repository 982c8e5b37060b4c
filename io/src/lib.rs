//! MPI-IO (MPI-3.1 chapter 13) for mpcrs: files opened together by the ranks
//! of a communicator, views, individual and shared file pointers, and
//! collective access aggregated per process.
//!
//! - file.rs: one rank's handle: open/close, size, atomicity, view, pointers,
//!   and accesses planned then performed;
//! - opened.rs: the descriptor the ranks of a process share;
//! - collective.rs: rounds in which a process's ranks move their pieces
//!   with as few calls as the file's layout allows;
//! - shared_pointer.rs: the shared file pointer, a counter in a window;
//! - view.rs: where a view puts the data stream's bytes;
//! - sys.rs: the system calls and errno as error classes.
//!
//! Owns: files and their state. Must not touch: handles and the C ABI
//! (mpi-abi, which turns datatypes into [`Layout`]s and buffers into packed
//! bytes), the fabric and the checkpoint protocol (a file's descriptor is an
//! ordinary open file of its process: images record it and a restart
//! reopens it; the shared pointer is a window, rebuilt like any other).

mod collective;
mod file;
mod opened;
mod shared_pointer;
mod sys;
mod view;

pub use file::{amode, delete, whence, Direction, File, Plan, Position};
pub use view::{Layout, View};
