//! The header and the library cannot drift: this crate compiles only if every
//! function mpi.h declares exists in libmpi's Rust code with exactly the
//! signature bindgen derives from the header (see build.rs). Its tests compare
//! MPI_Status layouts and every constant of mpi.h with MPICH's header.
//!
//! Owns nothing at run time; it is a check.

#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    clippy::all
)]

/// The header as bindgen sees it, with MPI_Status from the Rust side.
pub mod header {
    include!(concat!(env!("OUT_DIR"), "/header.rs"));
}

/// One constant per declared function: the Rust function coerced to the header's
/// function-pointer type.
pub mod signatures {
    use super::header::*;
    include!(concat!(env!("OUT_DIR"), "/signatures.rs"));
}

/// The header's own MPI_Status.
pub mod header_status {
    include!(concat!(env!("OUT_DIR"), "/status.rs"));
}
