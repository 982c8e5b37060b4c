//! Persistent collectives (MPI-4, MPI_Bcast_init and the like): the call
//! describes the collective once (nbc.rs copies its per-rank arrays; the
//! handles it names stay pinned until the request is freed) and each
//! MPI_Start runs it again as a non-blocking collective. MPI matches a
//! persistent collective by the order of the init calls, whatever the order
//! of the starts: so each request runs on a private duplicate of the
//! communicator, made (non-blocking, in the place of the init among the
//! rank's collectives) by the init. The info argument carries no hint this
//! library uses.

use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use mpcrs::raw::{self, RawRequest};

use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::nbc::{self, at, per_rank, Coll, Uniform, P};
use crate::neighbor::{
    degrees, PMPI_Neighbor_allgather, PMPI_Neighbor_allgatherv, PMPI_Neighbor_alltoall,
    PMPI_Neighbor_alltoallv, PMPI_Neighbor_alltoallw,
};
use crate::requests::{add_persistent, Persistent};

/// A persistent collective request's collective and its private communicator.
pub(crate) struct PColl {
    coll: Coll,
    /// Completes when the private duplicate exists (or failed).
    dup: Arc<RawRequest>,
    /// The duplicate's handle in the rank's table (MPI_COMM_NULL before).
    private: Arc<AtomicI32>,
    /// Completes with the last start: the duplicate is freed after it.
    last: std::sync::Mutex<Option<RawRequest>>,
}

impl PColl {
    /// MPI_Start: runs the collective once more on the private communicator.
    pub(crate) fn start(&self) -> RawRequest {
        let (req, completer) = raw::manual_request();
        let (ran, ran_completer) = raw::manual_request();
        *self.last.lock().unwrap() = Some(ran);
        // Pinned for this start too: the request may be freed while it runs.
        self.coll.pin();
        let (dup, private, coll) = (self.dup.clone(), self.private.clone(), self.coll.clone());
        raw::spawn_as_rank(move || {
            let made = dup.wait();
            let mut st = mpcrs::Status::empty();
            if made.error != mpcrs::ErrorClass::Success {
                st.error = made.error;
            } else {
                let rc = (coll.body)(private.load(Ordering::Acquire));
                if rc != MPI_SUCCESS {
                    st.error = crate::env::class_of(rc).unwrap_or(mpcrs::ErrorClass::Other);
                }
            }
            coll.unpin();
            ran_completer.complete(st);
            completer.complete(st);
        });
        req
    }

    /// MPI_Request_free: the handles are the program's again, and the
    /// private communicator goes once it exists (a start in flight holds its
    /// own reference to it).
    pub(crate) fn free(&self) {
        self.coll.unpin();
        let (dup, private) = (self.dup.clone(), self.private.clone());
        let last = self.last.lock().unwrap().take();
        raw::spawn_as_rank(move || {
            dup.wait();
            if let Some(l) = last {
                l.wait();
            }
            let h = private.swap(MPI_COMM_NULL, Ordering::AcqRel);
            if h != MPI_COMM_NULL {
                let mut st = rank_state().expect("inside a rank");
                st.topos.remove(&h);
                st.free_comm(h);
            }
        });
    }
}

/// Makes the private duplicate of `comm` in a helper, in the init's place
/// among the rank's collectives on `comm`: no attributes are copied (it is no
/// communicator of the program's).
fn private_dup(
    call: &'static str,
    comm: MPI_Comm,
) -> Result<(Arc<RawRequest>, Arc<AtomicI32>), c_int> {
    let slot = Arc::new(AtomicI32::new(MPI_COMM_NULL));
    let out = slot.clone();
    let dup = Coll::new(call, comm, vec![], move |comm: MPI_Comm| {
        let c = match comm_for(call, comm) {
            Ok(c) => c,
            Err(code) => return code,
        };
        match c.dup() {
            Ok(d) => {
                let h = rank_state().expect("inside a rank").add_comm(d);
                // A neighbourhood collective runs on the topology's copy.
                if let Err(e) = crate::topo::copy_topology(comm, h) {
                    return code(&e);
                }
                out.store(h, Ordering::Release);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    });
    let (_, done) = dup.begin()?;
    Ok((Arc::new(done), slot))
}

/// Makes an inactive persistent request of `coll`.
///
/// # Safety
/// `request` writable.
unsafe fn persist(coll: Coll, request: *mut MPI_Request) -> c_int {
    let c = tri!(comm_for(coll.call, coll.comm));
    let (dup, private) = tri!(private_dup(coll.call, coll.comm));
    coll.pin();
    let call = coll.call;
    let pcoll = Persistent::Collective(Arc::new(PColl {
        coll,
        dup,
        private,
        last: Default::default(),
    }));
    let h = add_persistent(
        &mut rank_state().expect("inside a rank"),
        c.into(),
        call,
        pcoll,
    );
    // SAFETY: by contract.
    unsafe { *request = h };
    MPI_SUCCESS
}

mpi_fn! {
    fn Barrier_init(comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::barrier("MPI_Barrier_init", comm), request) }
    }

    fn Bcast_init(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::bcast("MPI_Bcast_init", buffer, count, datatype, root, comm), request) }
    }

    fn Reduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::reduce("MPI_Reduce_init", sendbuf, recvbuf, count, datatype, op, root, comm), request) }
    }

    fn Allreduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::allreduce("MPI_Allreduce_init", sendbuf, recvbuf, count, datatype, op, comm), request) }
    }

    fn Scan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::scan("MPI_Scan_init", false, sendbuf, recvbuf, count, datatype, op, comm), request) }
    }

    fn Exscan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::scan("MPI_Exscan_init", true, sendbuf, recvbuf, count, datatype, op, comm), request) }
    }

    fn Reduce_scatter_block_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::reduce_scatter_block("MPI_Reduce_scatter_block_init", sendbuf, recvbuf, recvcount, datatype, op, comm), request) }
    }

    fn Reduce_scatter_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::reduce_scatter("MPI_Reduce_scatter_init", sendbuf, recvbuf, recvcounts, datatype, op, comm), request) }
    }

    fn Gather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::uniform("MPI_Gather_init", Uniform::Gather(root), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request) }
    }

    fn Scatter_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::uniform("MPI_Scatter_init", Uniform::Scatter(root), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request) }
    }

    fn Allgather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::uniform("MPI_Allgather_init", Uniform::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request) }
    }

    fn Alltoall_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::uniform("MPI_Alltoall_init", Uniform::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), request) }
    }

    fn Gatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::gatherv("MPI_Gatherv_init", Some(root), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), request) }
    }

    fn Allgatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::gatherv("MPI_Allgatherv_init", None, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), request) }
    }

    fn Scatterv_init(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::scatterv("MPI_Scatterv_init", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm), request) }
    }

    fn Alltoallv_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::alltoallv("MPI_Alltoallv_init", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm), request) }
    }

    fn Alltoallw_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { persist(nbc::alltoallw("MPI_Alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm), request) }
    }
}

// Persistent neighbourhood collectives: the blocking call, run at each start
// on the private duplicate (which has a copy of the topology).
mpi_fn! {
    fn Neighbor_allgather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the body): MPI keeps the buffers valid while the request lives.
        let coll = Coll::new("MPI_Neighbor_allgather_init", comm, vec![sendtype, recvtype], move |comm: MPI_Comm| unsafe {
            PMPI_Neighbor_allgather({ s }.0, sendcount, sendtype, { r }.0, recvcount, recvtype, comm)
        });
        // SAFETY: forwarded from the C caller.
        unsafe { persist(coll, request) }
    }

    fn Neighbor_allgatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let (ni, _) = degrees(comm);
        // SAFETY: one entry per in-neighbour.
        let (rc, rd) = unsafe { (per_rank(recvcounts, ni), per_rank(displs, ni)) };
        // SAFETY (in the body): as MPI_Neighbor_allgather_init; the arrays are copies.
        let coll = Coll::new("MPI_Neighbor_allgatherv_init", comm, vec![sendtype, recvtype], move |comm: MPI_Comm| unsafe {
            PMPI_Neighbor_allgatherv({ s }.0, sendcount, sendtype, { r }.0, at(&rc), at(&rd), recvtype, comm)
        });
        // SAFETY: forwarded from the C caller.
        unsafe { persist(coll, request) }
    }

    fn Neighbor_alltoall_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the body): as MPI_Neighbor_allgather_init.
        let coll = Coll::new("MPI_Neighbor_alltoall_init", comm, vec![sendtype, recvtype], move |comm: MPI_Comm| unsafe {
            PMPI_Neighbor_alltoall({ s }.0, sendcount, sendtype, { r }.0, recvcount, recvtype, comm)
        });
        // SAFETY: forwarded from the C caller.
        unsafe { persist(coll, request) }
    }

    fn Neighbor_alltoallv_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let (ni, no) = degrees(comm);
        // SAFETY: one entry per neighbour in each array.
        let (sc, sd, rc, rd) = unsafe { (per_rank(sendcounts, no), per_rank(sdispls, no), per_rank(recvcounts, ni), per_rank(rdispls, ni)) };
        // SAFETY (in the body): as MPI_Neighbor_allgatherv_init.
        let coll = Coll::new("MPI_Neighbor_alltoallv_init", comm, vec![sendtype, recvtype], move |comm: MPI_Comm| unsafe {
            PMPI_Neighbor_alltoallv({ s }.0, at(&sc), at(&sd), sendtype, { r }.0, at(&rc), at(&rd), recvtype, comm)
        });
        // SAFETY: forwarded from the C caller.
        unsafe { persist(coll, request) }
    }

    fn Neighbor_alltoallw_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, _info: c_int, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let (ni, no) = degrees(comm);
        // SAFETY: one entry per neighbour in each array.
        let (sc, sd, st, rc, rd, rt) = unsafe {
            (per_rank(sendcounts, no), per_rank(sdispls, no), per_rank(sendtypes, no), per_rank(recvcounts, ni), per_rank(rdispls, ni), per_rank(recvtypes, ni))
        };
        let handles = [&st[..], &rt[..]].concat();
        // SAFETY (in the body): as MPI_Neighbor_allgatherv_init.
        let coll = Coll::new("MPI_Neighbor_alltoallw_init", comm, handles, move |comm: MPI_Comm| unsafe {
            PMPI_Neighbor_alltoallw({ s }.0, at(&sc), at(&sd), at(&st), { r }.0, at(&rc), at(&rd), at(&rt), comm)
        });
        // SAFETY: forwarded from the C caller.
        unsafe { persist(coll, request) }
    }
}
