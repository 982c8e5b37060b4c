//! Intercommunicator calls: creation, merge and the remote group's queries.
//! Point-to-point and collectives on intercommunicators go through the usual
//! calls; the runtime sends them across the groups.

use std::os::raw::c_int;

use mpcrs::ErrorClass;

use crate::comm::{store_group, store_new};
use crate::export::{mpi_fn, tri};
use crate::handles::*;

mpi_fn! {
    fn Intercomm_create(local_comm: MPI_Comm, local_leader: c_int, peer_comm: MPI_Comm, remote_leader: c_int, tag: c_int, newintercomm: *mut MPI_Comm) -> c_int {
        let call = "MPI_Intercomm_create";
        let local = tri!(comm_for(call, local_comm));
        // The peer communicator matters at the local leader only; elsewhere it
        // may be anything, MPI_COMM_NULL included.
        let peer = if local.rank() == local_leader { Some(tri!(comm_for(call, peer_comm))) } else { None };
        match mpcrs::raw::intercomm_create(&local, local_leader, peer.as_deref(), remote_leader, tag) {
            Ok(c) => {
                store_new(Some(c), newintercomm);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Intercomm_merge(intercomm: MPI_Comm, high: c_int, newintracomm: *mut MPI_Comm) -> c_int {
        let call = "MPI_Intercomm_merge";
        let c = tri!(comm_for(call, intercomm));
        match mpcrs::raw::intercomm_merge(&c, high != 0) {
            Ok(m) => {
                store_new(Some(m), newintracomm);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> c_int {
        let c = tri!(comm_for("MPI_Comm_test_inter", comm));
        // SAFETY: writable by contract.
        unsafe { *flag = c.is_inter() as c_int };
        MPI_SUCCESS
    }

    fn Comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
        let call = "MPI_Comm_remote_size";
        let c = tri!(comm_for(call, comm));
        if !c.is_inter() {
            return fail(&c, call, ErrorClass::Comm, "not an intercommunicator".into());
        }
        // SAFETY: writable by contract.
        unsafe { *size = c.remote_size() };
        MPI_SUCCESS
    }

    fn Comm_remote_group(comm: MPI_Comm, group: *mut c_int) -> c_int {
        let call = "MPI_Comm_remote_group";
        let c = tri!(comm_for(call, comm));
        match c.remote_group() {
            Some(g) => store_group(g, group),
            None => fail(&c, call, ErrorClass::Comm, "not an intercommunicator".into()),
        }
    }
}
