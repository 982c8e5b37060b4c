//! C ABI of mpcrs (DESIGN.md sections 2 and 6): libmpi.so for C and C++ programs.
//!
//! Owns: include/mpi.h (ABI-compatible with MPICH 4.x), the exported `MPI_*` and
//! `PMPI_*` functions, the translation of integer handles to the runtime's objects
//! (per rank), the privatizing loader that runs one copy of a program's image per
//! rank (`mpcrs_abi_main`, started by `mpcrs-exec`; a fresh copy for each new
//! run of a job recovered in place, with the old run's heap blocks freed:
//! `rank_heap`), and the compiler wrapper `mpcrs-cc`.
//!
//! Must not touch: MPI semantics themselves (it calls the runtime's byte-level
//! `mpcrs::raw` API and the typed API), the scheduler, the network.

mod attributes;
mod bsend_buffers;
mod code_names;
mod coll;
mod comm;
mod craas;
pub mod ctypes;
mod datatype;
mod env;
mod errhandler;
mod errors;
mod export;
mod external;
mod files;
mod fortran;
mod fti;
mod getopt;
mod graph;
mod grequest;
mod handle_ints;
mod handles;
mod info;
mod intercomm;
mod interpose;
mod isendrecv;
mod large_coll;
mod large_count;
mod large_io;
mod large_p2p;
mod large_rma;
mod large_types;
mod libc_state;
mod libraries;
mod loader;
mod nbc;
mod neighbor;
mod p2p;
mod pcoll;
mod program_tls;
mod published;
mod rank_heap;
mod request_status;
mod requests;
mod rma;
mod session_errhandler;
mod sessions;
mod shared_text;
mod status;
mod status_fields;
mod stdin;
mod stdout;
mod threads;
mod tool;
mod topo;
mod type_attrs;
mod type_queries;
mod types;
mod unsupported;
mod windows;
pub mod wrapper;

pub use handles::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request, MPI_Status};

/// Size in bytes of a predefined datatype handle (for the ABI check).
#[doc(hidden)]
pub fn predefined_datatype_size(h: MPI_Datatype) -> Option<usize> {
    datatype::predefined(h).map(|e| e.size)
}

/// Every exported `MPI_*` and `PMPI_*` function as a Rust item, for the check of
/// their signatures against mpi.h (mpi-abi/check).
#[doc(hidden)]
pub mod abi {
    pub use crate::bsend_buffers::*;
    pub use crate::coll::*;
    pub use crate::comm::*;
    pub use crate::env::*;
    pub use crate::errhandler::*;
    pub use crate::errors::*;
    pub use crate::external::*;
    pub use crate::files::*;
    pub use crate::fortran::*;
    pub use crate::graph::*;
    pub use crate::grequest::*;
    pub use crate::handle_ints::*;
    pub use crate::info::*;
    pub use crate::intercomm::*;
    pub use crate::isendrecv::*;
    pub use crate::large_coll::*;
    pub use crate::large_count::*;
    pub use crate::large_io::*;
    pub use crate::large_p2p::*;
    pub use crate::large_rma::*;
    pub use crate::large_types::*;
    pub use crate::nbc::*;
    pub use crate::neighbor::*;
    pub use crate::p2p::*;
    pub use crate::pcoll::*;
    pub use crate::request_status::*;
    pub use crate::requests::*;
    pub use crate::rma::*;
    pub use crate::session_errhandler::*;
    pub use crate::sessions::*;
    pub use crate::status::*;
    pub use crate::status_fields::*;
    pub use crate::tool::*;
    pub use crate::topo::*;
    pub use crate::type_attrs::*;
    pub use crate::type_queries::*;
    pub use crate::types::*;
    pub use crate::unsupported::*;
    pub use crate::windows::*;
}
pub use loader::mpcrs_abi_main;
