//! Neighbourhood collectives (MPI-3.1 section 7.6) on Cartesian, graph and
//! distributed-graph communicators: point-to-point messages with datatypes on
//! the topology's private duplicate of the communicator, one per neighbour
//! (MPI_PROC_NULL neighbours move no data). The non-blocking forms run the
//! blocking ones in helper ULTs (nbc.rs).

use std::os::raw::{c_int, c_void};

use mpcrs::raw::{self, RawRequest};
use mpcrs::{Communicator, ErrorClass};

use crate::datatype::{self, Staging, TypeInfo};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::nbc::{at, launch, per_rank, P};
use crate::topo::{topology, Neighbour, Topology};

/// One neighbour's block: `count` elements of `ti` at `buf`.
struct Block {
    peer: Neighbour,
    buf: *mut u8,
    count: usize,
    ti: TypeInfo,
}

/// The communicator and topology of a neighbourhood collective.
fn topo_for(call: &'static str, comm: MPI_Comm) -> Result<(CommRef, Topology), c_int> {
    let c = comm_for(call, comm)?;
    match topology(comm) {
        Some(t) => Ok((c, t)),
        None => Err(fail(
            &c,
            call,
            ErrorClass::Topology,
            "the communicator has no topology (Cartesian, graph or distributed graph)".into(),
        )),
    }
}

/// In- and out-degree of `comm`'s topology (0 if it has none: the call then
/// reports it), for copying per-neighbour arrays.
pub(crate) fn degrees(comm: MPI_Comm) -> (usize, usize) {
    let (Some(t), Some(c)) = (topology(comm), rank_state().and_then(|st| st.comm(comm))) else {
        return (0, 0);
    };
    let (i, o) = t.shape.neighbours(c.rank());
    (i.len(), o.len())
}

/// `(count, datatype)` described, or the error raised on `c`.
fn describe(
    c: &Communicator,
    call: &'static str,
    count: c_int,
    t: MPI_Datatype,
) -> Result<TypeInfo, c_int> {
    datatype::describe(count, t)
        .map(|(_, ti)| ti)
        .map_err(|(class, detail)| fail(c, call, class, detail))
}

/// Where block `i` of `count` elements of `ti` starts in `buf`.
fn block_at(buf: *const c_void, displ_elements: isize, ti: &TypeInfo) -> *mut u8 {
    (buf as *mut u8).wrapping_offset(displ_elements * ti.extent)
}

/// Posts every receive, then every send, and waits for all of them.
fn exchange(
    c: &Communicator,
    t: &Topology,
    call: &'static str,
    recvs: Vec<Block>,
    sends: Vec<Block>,
) -> c_int {
    let wire = &t.wire;
    let mut incoming: Vec<(RawRequest, Option<Staging>)> = Vec::with_capacity(recvs.len());
    let mut outgoing: Vec<(RawRequest, Option<Staging>)> = Vec::with_capacity(sends.len());
    let mut first_err = None;
    for b in recvs.iter().filter(|b| b.peer.rank != mpcrs::PROC_NULL) {
        // SAFETY: the block lies in the program's receive buffer, untouched by
        // it until this collective completes (or its request does).
        let (dst, staging) = unsafe { Staging::recv(b.buf, b.count, &b.ti, false) };
        // SAFETY: `dst` holds the block's bytes until the wait below.
        match unsafe {
            raw::irecv(
                wire,
                call,
                dst,
                b.count * b.ti.size,
                b.peer.rank,
                b.peer.tag,
            )
        } {
            Ok(r) => incoming.push((r, staging)),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    for b in sends.iter().filter(|b| b.peer.rank != mpcrs::PROC_NULL) {
        // SAFETY: the block lies in the program's send buffer.
        let (data, staging) = unsafe { Staging::send(b.buf, b.count, &b.ti) };
        // SAFETY: `data` (the buffer or the packed copy kept with the request)
        // lives until the wait below.
        match unsafe {
            raw::isend(
                wire,
                call,
                data,
                b.count * b.ti.size,
                b.peer.rank,
                b.peer.tag,
                false,
            )
        } {
            Ok(r) => outgoing.push((r, staging)),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    for (r, _) in outgoing {
        r.wait();
    }
    for (r, staging) in incoming {
        let st = r.wait();
        if let Some(s) = staging {
            s.finish(st.bytes);
        }
        if let Err(e) = raw::status_error(wire, call, &st) {
            first_err.get_or_insert(e);
        }
    }
    match first_err {
        None => MPI_SUCCESS,
        Some(e) => fail(c, call, e.class, e.detail),
    }
}

mpi_fn! {
    fn Neighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Neighbor_allgather";
        let (c, t) = tri!(topo_for(call, comm));
        let (sti, rti) = (tri!(describe(&c, call, sendcount, sendtype)), tri!(describe(&c, call, recvcount, recvtype)));
        let (ins, outs) = t.shape.neighbours(c.rank());
        let recvs = ins.iter().enumerate().map(|(i, &peer)| Block {
            peer, buf: block_at(recvbuf, i as isize * recvcount as isize, &rti), count: recvcount as usize, ti: rti.clone(),
        }).collect();
        let sends = outs.iter().map(|&peer| Block { peer, buf: sendbuf as *mut u8, count: sendcount as usize, ti: sti.clone() }).collect();
        exchange(&c, &t, call, recvs, sends)
    }

    fn Neighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Neighbor_allgatherv";
        let (c, t) = tri!(topo_for(call, comm));
        let sti = tri!(describe(&c, call, sendcount, sendtype));
        let rti = tri!(describe(&c, call, 0, recvtype));
        let (ins, outs) = t.shape.neighbours(c.rank());
        // SAFETY: one entry per in-neighbour, by contract.
        let (rc, rd) = unsafe { (c_array(recvcounts, ins.len()), c_array(displs, ins.len())) };
        if rc.len() < ins.len() || rd.len() < ins.len() {
            return fail(&c, call, ErrorClass::Arg, "a count or displacement array is NULL".into());
        }
        if let Some(&bad) = rc.iter().find(|&&n| n < 0) {
            return fail(&c, call, ErrorClass::Count, format!("negative count {bad}"));
        }
        let recvs = ins.iter().enumerate().map(|(i, &peer)| Block {
            peer, buf: block_at(recvbuf, rd[i] as isize, &rti), count: rc[i] as usize, ti: rti.clone(),
        }).collect();
        let sends = outs.iter().map(|&peer| Block { peer, buf: sendbuf as *mut u8, count: sendcount as usize, ti: sti.clone() }).collect();
        exchange(&c, &t, call, recvs, sends)
    }

    fn Neighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Neighbor_alltoall";
        let (c, t) = tri!(topo_for(call, comm));
        let (sti, rti) = (tri!(describe(&c, call, sendcount, sendtype)), tri!(describe(&c, call, recvcount, recvtype)));
        let (ins, outs) = t.shape.neighbours(c.rank());
        let recvs = ins.iter().enumerate().map(|(i, &peer)| Block {
            peer, buf: block_at(recvbuf, i as isize * recvcount as isize, &rti), count: recvcount as usize, ti: rti.clone(),
        }).collect();
        let sends = outs.iter().enumerate().map(|(k, &peer)| Block {
            peer, buf: block_at(sendbuf, k as isize * sendcount as isize, &sti), count: sendcount as usize, ti: sti.clone(),
        }).collect();
        exchange(&c, &t, call, recvs, sends)
    }

    fn Neighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Neighbor_alltoallv";
        let (c, t) = tri!(topo_for(call, comm));
        let (sti, rti) = (tri!(describe(&c, call, 0, sendtype)), tri!(describe(&c, call, 0, recvtype)));
        let (ins, outs) = t.shape.neighbours(c.rank());
        // SAFETY: one entry per in- or out-neighbour, by contract.
        let (sc, sd, rc, rd) = unsafe {
            (c_array(sendcounts, outs.len()), c_array(sdispls, outs.len()), c_array(recvcounts, ins.len()), c_array(rdispls, ins.len()))
        };
        if sc.len() < outs.len() || sd.len() < outs.len() || rc.len() < ins.len() || rd.len() < ins.len() {
            return fail(&c, call, ErrorClass::Arg, "a count or displacement array is NULL".into());
        }
        if let Some(&bad) = sc.iter().chain(rc).find(|&&n| n < 0) {
            return fail(&c, call, ErrorClass::Count, format!("negative count {bad}"));
        }
        let recvs = ins.iter().enumerate().map(|(i, &peer)| Block {
            peer, buf: block_at(recvbuf, rd[i] as isize, &rti), count: rc[i] as usize, ti: rti.clone(),
        }).collect();
        let sends = outs.iter().enumerate().map(|(k, &peer)| Block {
            peer, buf: block_at(sendbuf, sd[k] as isize, &sti), count: sc[k] as usize, ti: sti.clone(),
        }).collect();
        exchange(&c, &t, call, recvs, sends)
    }

    fn Neighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Neighbor_alltoallw";
        let (c, t) = tri!(topo_for(call, comm));
        let (ins, outs) = t.shape.neighbours(c.rank());
        let (ni, no) = (ins.len(), outs.len());
        // SAFETY: one entry per in- or out-neighbour, by contract.
        let (sc, sd, st, rc, rd, rt) = unsafe {
            (c_array(sendcounts, no), c_array(sdispls, no), c_array(sendtypes, no), c_array(recvcounts, ni), c_array(rdispls, ni), c_array(recvtypes, ni))
        };
        if [sc.len(), sd.len(), st.len()].iter().any(|&l| l < no) || [rc.len(), rd.len(), rt.len()].iter().any(|&l| l < ni) {
            return fail(&c, call, ErrorClass::Arg, "a count, displacement or type array is NULL".into());
        }
        // Displacements are in bytes; every block has its own type.
        let mut recvs = Vec::with_capacity(ni);
        for (i, &peer) in ins.iter().enumerate() {
            let ti = tri!(describe(&c, call, rc[i], rt[i]));
            recvs.push(Block { peer, buf: (recvbuf as *mut u8).wrapping_offset(rd[i] as isize), count: rc[i] as usize, ti });
        }
        let mut sends = Vec::with_capacity(no);
        for (k, &peer) in outs.iter().enumerate() {
            let ti = tri!(describe(&c, call, sc[k], st[k]));
            sends.push(Block { peer, buf: (sendbuf as *mut u8).wrapping_offset(sd[k] as isize), count: sc[k] as usize, ti });
        }
        exchange(&c, &t, call, recvs, sends)
    }
}

mpi_fn! {
    fn Ineighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): MPI keeps the buffers valid until the request completes.
        launch("MPI_Ineighbor_allgather", comm, vec![sendtype, recvtype], request, move || unsafe {
            PMPI_Neighbor_allgather({ s }.0, sendcount, sendtype, { r }.0, recvcount, recvtype, comm)
        })
    }

    fn Ineighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let (ni, _) = degrees(comm);
        // SAFETY: one entry per in-neighbour.
        let (rc, rd) = unsafe { (per_rank(recvcounts, ni), per_rank(displs, ni)) };
        // SAFETY (in the helper): as MPI_Ineighbor_allgather; the arrays are the helper's copies.
        launch("MPI_Ineighbor_allgatherv", comm, vec![sendtype, recvtype], request, move || unsafe {
            PMPI_Neighbor_allgatherv({ s }.0, sendcount, sendtype, { r }.0, at(&rc), at(&rd), recvtype, comm)
        })
    }

    fn Ineighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        // SAFETY (in the helper): as MPI_Ineighbor_allgather.
        launch("MPI_Ineighbor_alltoall", comm, vec![sendtype, recvtype], request, move || unsafe {
            PMPI_Neighbor_alltoall({ s }.0, sendcount, sendtype, { r }.0, recvcount, recvtype, comm)
        })
    }

    fn Ineighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let (ni, no) = degrees(comm);
        // SAFETY: one entry per neighbour in each array.
        let (sc, sd, rc, rd) = unsafe { (per_rank(sendcounts, no), per_rank(sdispls, no), per_rank(recvcounts, ni), per_rank(rdispls, ni)) };
        // SAFETY (in the helper): as MPI_Ineighbor_allgatherv.
        launch("MPI_Ineighbor_alltoallv", comm, vec![sendtype, recvtype], request, move || unsafe {
            PMPI_Neighbor_alltoallv({ s }.0, at(&sc), at(&sd), sendtype, { r }.0, at(&rc), at(&rd), recvtype, comm)
        })
    }

    fn Ineighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let (s, r) = (P(sendbuf as *mut c_void), P(recvbuf));
        let (ni, no) = degrees(comm);
        // SAFETY: one entry per neighbour in each array.
        let (sc, sd, st, rc, rd, rt) = unsafe {
            (per_rank(sendcounts, no), per_rank(sdispls, no), per_rank(sendtypes, no), per_rank(recvcounts, ni), per_rank(rdispls, ni), per_rank(recvtypes, ni))
        };
        // SAFETY (in the helper): as MPI_Ineighbor_allgatherv.
        launch("MPI_Ineighbor_alltoallw", comm, [&st[..], &rt[..]].concat(), request, move || unsafe {
            PMPI_Neighbor_alltoallw({ s }.0, at(&sc), at(&sd), at(&st), { r }.0, at(&rc), at(&rd), at(&rt), comm)
        })
    }
}
