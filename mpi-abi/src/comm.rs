//! Communicator calls.

use std::os::raw::c_int;

use mpcrs::{Comparison, ErrorClass};

use crate::export::mpi_fn;
use crate::handles::*;

fn store_new(c: Option<mpcrs::Communicator>, out: *mut MPI_Comm) {
    let h = match c {
        Some(c) => rank_state().expect("inside a rank").add_comm(c),
        None => MPI_COMM_NULL,
    };
    // SAFETY: `out` is writable by the callers' contract.
    unsafe { *out = h };
}

mpi_fn! {
    fn Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
        match comm_for("MPI_Comm_size", comm) {
            Ok(c) => {
                // SAFETY: writable by contract.
                unsafe { *size = c.size() };
                MPI_SUCCESS
            }
            Err(code) => code,
        }
    }

    fn Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int {
        match comm_for("MPI_Comm_rank", comm) {
            Ok(c) => {
                // SAFETY: writable by contract.
                unsafe { *rank = c.rank() };
                MPI_SUCCESS
            }
            Err(code) => code,
        }
    }

    fn Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
        let c = match comm_for("MPI_Comm_dup", comm) {
            Ok(c) => c,
            Err(code) => return code,
        };
        match c.dup() {
            Ok(d) => {
                store_new(Some(d), newcomm);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Comm_split(comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) -> c_int {
        let c = match comm_for("MPI_Comm_split", comm) {
            Ok(c) => c,
            Err(code) => return code,
        };
        let color = if color == MPI_UNDEFINED { None } else { Some(color) };
        match c.split(color, key) {
            Ok(s) => {
                store_new(s, newcomm);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Comm_free(comm: *mut MPI_Comm) -> c_int {
        // SAFETY: readable and writable by contract.
        let h = unsafe { *comm };
        let c = match comm_for("MPI_Comm_free", h) {
            Ok(c) => c,
            Err(code) => return code,
        };
        if !rank_state().expect("inside a rank").free_comm(h) {
            return fail(&c, "MPI_Comm_free", ErrorClass::Comm, "predefined communicators cannot be freed".into());
        }
        // SAFETY: writable by contract.
        unsafe { *comm = MPI_COMM_NULL };
        MPI_SUCCESS
    }

    fn Comm_compare(comm1: MPI_Comm, comm2: MPI_Comm, result: *mut c_int) -> c_int {
        let (a, b) = match (comm_for("MPI_Comm_compare", comm1), comm_for("MPI_Comm_compare", comm2)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(code), _) | (_, Err(code)) => return code,
        };
        let r = match a.compare(&b) {
            Comparison::Identical => MPI_IDENT,
            Comparison::Congruent => MPI_CONGRUENT,
            Comparison::Similar => MPI_SIMILAR,
            Comparison::Unequal => MPI_UNEQUAL,
        };
        // SAFETY: writable by contract.
        unsafe { *result = r };
        MPI_SUCCESS
    }
}
