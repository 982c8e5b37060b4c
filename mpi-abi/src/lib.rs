//! C ABI of mpcrs (DESIGN.md sections 2 and 6).
//!
//! Owns: include/mpi.h (ABI-compatible with MPICH 4.x), the libmpi cdylib exporting
//! `MPI_*` and `PMPI_*`, the compiler wrappers (mpcrs-cc, mpcrs-cxx), and the loader
//! that privatizes a C program's globals by loading one copy of its image per rank.
//!
//! Must not touch: MPI semantics themselves (it translates handles and calls into
//! the runtime crate), the scheduler, the network.
//!
//! State now: empty; C programs are the next step after the Rust API.
