//! Collective calls and reduction ops. Non-contiguous datatypes are packed into
//! staging areas around the byte-level collectives of the runtime.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use mpcrs::raw::{self, Elements, Layout, Pattern};
use mpcrs::{Communicator, ErrorClass, Op};

use crate::ctypes::MPI_Count;
use crate::datatype::{self, Staging, TypeInfo};
use crate::errhandler::ret_on;
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::p2p::{resolve, resolve_fast, Resolved};

/// The runtime op of a handle for elements of type `t`.
pub(crate) fn op_of(h: MPI_Op, t: MPI_Datatype, el: Elements) -> Option<Op> {
    Some(match h {
        0x5800_0001 => Op::Max,
        0x5800_0002 => Op::Min,
        0x5800_0003 => Op::Sum,
        0x5800_0004 => Op::Prod,
        0x5800_0005 => Op::LogicalAnd,
        0x5800_0006 => Op::BitAnd,
        0x5800_0007 => Op::LogicalOr,
        0x5800_0008 => Op::BitOr,
        0x5800_0009 => Op::LogicalXor,
        0x5800_000a => Op::BitXor,
        0x5800_000b => Op::MinLoc,
        0x5800_000c => Op::MaxLoc,
        0x5800_000d => Op::Replace,
        0x5800_000e => Op::NoOp,
        h => {
            let u = rank_state()?.user_op(h)?;
            let func = u.func;
            // The C function sees (invec, inoutvec, &count, &datatype), as MPI says,
            // with the count in elements of the datatype the call named.
            // The data is packed: a type with gaps is laid out again for it.
            let ti = datatype::info(t)?;
            let _ = el;
            Op::user_bytes(
                u.commute,
                Arc::new(move |input: &[u8], inout: &mut [u8]| {
                    datatype::in_layout(&ti, input, inout, |a, b, n| {
                        let mut dt = t;
                        // SAFETY: both areas hold `n` elements of `t` as the
                        // type lays them out; the C function reads `invec` only.
                        unsafe {
                            match func {
                                UserFn::Int(f) => f(a.cast(), b.cast(), &mut (n as c_int), &mut dt),
                                UserFn::Large(f) => {
                                    f(a.cast(), b.cast(), &mut (n as MPI_Count), &mut dt)
                                }
                            }
                        }
                    })
                }),
            )
        }
    })
}

/// The unit a reduction may be split at: a basic element for built-in ops,
/// a whole element of the call's datatype for a user op, whose function is
/// handed whole elements (a chunk starting inside a 3-double element gave
/// the function misaligned data).
fn reduced_unit(o: &Op, t: MPI_Datatype, el: Elements) -> Elements {
    let size = match o {
        Op::User { .. } => datatype::info(t).map_or(el.size, |ti| ti.size.max(1)),
        _ => el.size,
    };
    Elements {
        kind: el.kind,
        size,
    }
}

/// Which reduction a call performs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reduction {
    Reduce { root: c_int },
    All,
    Scan { exclusive: bool },
}

/// Reduce, Allreduce, Scan and Exscan: stage the buffers, reduce packed data,
/// unpack the result where this rank receives one.
#[allow(clippy::too_many_arguments)]
unsafe fn reduction(
    call: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    t: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    kind: Reduction,
) -> c_int {
    let (c, r) = tri!(resolve_fast(call, comm, count, t));
    // Predefined types (the common case) need neither a description nor staging.
    let (len, ti, el) = match r {
        Resolved::Contiguous(len) => (
            len,
            None,
            datatype::predefined_contiguous(t).expect("resolved as predefined"),
        ),
        Resolved::Typed(len, ti) => match ti.elem {
            Some(el) => (len, Some(ti), el),
            None => {
                return fail(
                    &c,
                    call,
                    ErrorClass::Type,
                    "reductions need a datatype made of one basic type".into(),
                );
            }
        },
    };
    let Some(o) = op_of(op, t, el) else {
        return fail(
            &c,
            call,
            ErrorClass::Op,
            format!("invalid op handle {op:#x}"),
        );
    };
    let n = count as usize;
    let receives = match kind {
        Reduction::Reduce { root } => c.is_root(root),
        _ => true,
    };
    let in_place = is_in_place(sendbuf);
    let (rptr, rstage) = match &ti {
        // SAFETY: MPI lends the buffers for the call, each holding `count` elements.
        Some(ti) if receives || in_place => unsafe {
            Staging::recv(recvbuf.cast(), n, ti, in_place)
        },
        _ if receives || in_place => (recvbuf.cast(), None),
        _ => (std::ptr::null_mut(), None),
    };
    let (sptr, _sstage) = match &ti {
        _ if in_place => (rptr as *const u8, None),
        // SAFETY: as above.
        Some(ti) => unsafe { Staging::send(sendbuf.cast(), n, ti) },
        None => (sendbuf.cast(), None),
    };
    let el = reduced_unit(&o, t, el);
    // SAFETY: staged or user areas of `len` bytes, alive until we return.
    let r = unsafe {
        match kind {
            Reduction::Reduce { root } => {
                raw::reduce(&c, call, sptr, rptr, len, el, &o, Some(root))
            }
            Reduction::All => raw::reduce(&c, call, sptr, rptr, len, el, &o, None),
            Reduction::Scan { exclusive } => {
                raw::scan(&c, call, sptr, rptr, len, el, &o, exclusive)
            }
        }
    };
    if r.is_ok() && receives {
        if let Some(s) = rstage {
            s.finish(len);
        }
    }
    ret_on(&c, r)
}

/// A v-layout (counts and displacements in elements of `ti`) in packed bytes: the
/// data of block j is stored contiguously at byte displacement `displs[j]`.
struct VStaged {
    counts: Vec<usize>,
    displs: Vec<usize>,
    stage: Option<Staging>,
    ptr: *mut u8,
}

/// Stages a v-layout buffer: contiguous types use the user's buffer with byte
/// counts and displacements; others are packed block by block.
///
/// # Safety
/// `buf` holds every block the layout names.
unsafe fn stage_v(
    buf: *mut u8,
    counts: &[c_int],
    displs: &[c_int],
    ti: &TypeInfo,
    contents: bool,
) -> VStaged {
    let c: Vec<usize> = counts.iter().map(|&x| x.max(0) as usize).collect();
    if ti.is_contiguous() {
        return VStaged {
            counts: c.iter().map(|&x| x * ti.size).collect(),
            displs: displs
                .iter()
                .map(|&d| d.max(0) as usize * ti.size)
                .collect(),
            stage: None,
            ptr: buf,
        };
    }
    // Packed: the blocks one after the other, in block order. Expressed as one
    // "element" type whose pieces are the blocks, so Staging packs and unpacks it.
    let mut pieces: Vec<(isize, usize)> = Vec::new();
    let mut pd = Vec::with_capacity(c.len());
    let mut at = 0;
    for (j, &n) in c.iter().enumerate() {
        pd.push(at);
        let base = displs[j] as isize * ti.extent;
        for k in 0..n {
            for &(o, l) in ti.blocks.iter() {
                pieces.push((base + k as isize * ti.extent + o, l));
            }
        }
        at += n * ti.size;
    }
    let whole = TypeInfo {
        size: at,
        lb: 0,
        extent: 0,
        true_lb: 0,
        true_extent: 0,
        blocks: datatype::Blocks::from(pieces),
        elem: ti.elem,
        committed: true,
        basics: ti.basics.clone(),
        align: ti.align,
        envelope: None,
    };
    // SAFETY: forwarded; one "element" of `whole` covers every block.
    let (ptr, stage) = unsafe { Staging::recv(buf, 1, &whole, contents) };
    VStaged {
        counts: c.iter().map(|&x| x * ti.size).collect(),
        displs: pd,
        stage,
        ptr,
    }
}

/// The common part of the uniform gather/scatter/allgather/alltoall calls.
#[allow(clippy::too_many_arguments)]
unsafe fn exchange_uniform(
    call: &'static str,
    pattern: Pattern,
    comm: &Communicator,
    send: (*const c_void, c_int, MPI_Datatype),
    send_blocks: usize,
    recv: (*mut c_void, c_int, MPI_Datatype),
    recv_blocks: usize,
    in_place: bool,
) -> c_int {
    let (rlen, rti) = if recv_blocks > 0 {
        match datatype::describe(recv.1, recv.2) {
            Ok(x) => x,
            Err((class, detail)) => return fail(comm, call, class, detail),
        }
    } else {
        (
            0,
            TypeInfo::basic(Elements {
                kind: mpcrs::Kind::U8,
                size: 1,
            }),
        )
    };
    let (rptr, rstage) = if recv_blocks > 0 {
        // SAFETY: the receive buffer holds recv_blocks * count elements.
        unsafe {
            Staging::recv(
                recv.0.cast(),
                recv_blocks * recv.1.max(0) as usize,
                &rti,
                in_place,
            )
        }
    } else {
        (std::ptr::null_mut(), None)
    };
    let (sptr, slen, _sstage) = if in_place {
        (rptr as *const u8, rlen, None)
    } else if send_blocks > 0 {
        let (slen, sti) = match datatype::describe(send.1, send.2) {
            Ok(x) => x,
            Err((class, detail)) => return fail(comm, call, class, detail),
        };
        // SAFETY: the send buffer holds send_blocks * count elements.
        let (p, st) =
            unsafe { Staging::send(send.0.cast(), send_blocks * send.1.max(0) as usize, &sti) };
        (p, slen, st)
    } else {
        (std::ptr::null(), 0, None)
    };
    // In place, a rank's own block is already in the (staged) receive area.
    let me = comm.rank().max(0) as usize;
    let sptr = if in_place && matches!(pattern, Pattern::Gather { .. } | Pattern::AllGather) {
        sptr.wrapping_add(me * rlen)
    } else {
        sptr
    };
    // SAFETY: staged or user areas sized by their counts, alive until we return.
    let r = unsafe {
        raw::exchange(
            comm,
            call,
            pattern,
            sptr,
            Layout::Uniform(slen),
            rptr,
            Layout::Uniform(rlen),
        )
    };
    if r.is_ok() {
        if let Some(s) = rstage {
            s.finish(usize::MAX);
        }
    }
    ret_on(comm, r)
}

mpi_fn! {
    fn Barrier(comm: MPI_Comm) -> c_int {
        match comm_for("MPI_Barrier", comm) {
            Ok(c) => {
                raw::barrier(&c);
                MPI_SUCCESS
            }
            Err(code) => code,
        }
    }

    fn Bcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let (c, len, ti) = tri!(resolve("MPI_Bcast", comm, count, datatype));
        // The root's data goes out packed; everyone unpacks what arrives (on an
        // intercommunicator, the root's group but the root receives nothing).
        let is_root = c.is_root(root) || (c.is_inter() && root == mpcrs::PROC_NULL);
        // SAFETY: buffer lent for the call, `count` elements.
        let (p, stage) = unsafe { Staging::recv(buffer.cast(), count.max(0) as usize, &ti, is_root) };
        // SAFETY: `p` holds `len` bytes until we return.
        let r = unsafe { raw::bcast(&c, p, len, root) };
        if r.is_ok() && !is_root {
            if let Some(s) = stage {
                s.finish(len);
            }
        }
        ret_on(&c, r)
    }

    fn Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { reduction("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, comm, Reduction::Reduce { root }) }
    }

    fn Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { reduction("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm, Reduction::All) }
    }

    fn Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { reduction("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, Reduction::Scan { exclusive: false }) }
    }

    fn Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { reduction("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, Reduction::Scan { exclusive: true }) }
    }

    fn Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Reduce_scatter_block", comm));
        let counts = vec![recvcount; c.size() as usize];
        // SAFETY: forwarded from the C caller.
        unsafe { reduce_scatter("MPI_Reduce_scatter_block", &c, sendbuf, recvbuf, &counts, datatype, op) }
    }

    fn Reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Reduce_scatter", comm));
        // SAFETY: one count per rank.
        let counts = unsafe { c_array(recvcounts, c.size() as usize) }.to_vec();
        // SAFETY: forwarded from the C caller.
        unsafe { reduce_scatter("MPI_Reduce_scatter", &c, sendbuf, recvbuf, &counts, datatype, op) }
    }

    fn Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Gather", comm));
        let root_blocks = if c.is_root(root) { c.peer_count() } else { 0 };
        let in_place = is_in_place(sendbuf) && c.is_root(root);
        // SAFETY: forwarded from the C caller.
        unsafe {
            exchange_uniform("MPI_Gather", Pattern::Gather { root: root as usize }, &c,
                (sendbuf, sendcount, sendtype), 1, (recvbuf, recvcount, recvtype), root_blocks, in_place)
        }
    }

    fn Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Scatter", comm));
        let is_root = c.is_root(root);
        if is_root && is_in_place(recvbuf) {
            // The root keeps its block in place: receive it into a scratch copy.
            let (len, _) = match datatype::describe(sendcount, sendtype) {
                Ok(x) => x,
                Err((class, detail)) => return fail(&c, "MPI_Scatter", class, detail),
            };
            let mut scratch = vec![0u8; len];
            // SAFETY: forwarded; the scratch holds one block.
            return unsafe {
                exchange_uniform("MPI_Scatter", Pattern::Scatter { root: root as usize }, &c,
                    (sendbuf, sendcount, sendtype), c.peer_count(),
                    (scratch.as_mut_ptr().cast(), len as c_int, 0x4c00_010d), 1, false)
            };
        }
        let send_blocks = if is_root { c.peer_count() } else { 0 };
        // SAFETY: forwarded from the C caller.
        unsafe {
            exchange_uniform("MPI_Scatter", Pattern::Scatter { root: root as usize }, &c,
                (sendbuf, sendcount, sendtype), send_blocks, (recvbuf, recvcount, recvtype), 1, false)
        }
    }

    fn Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Allgather", comm));
        let n = c.peer_count();
        // SAFETY: forwarded from the C caller.
        unsafe {
            exchange_uniform("MPI_Allgather", Pattern::AllGather, &c, (sendbuf, sendcount, sendtype), 1,
                (recvbuf, recvcount, recvtype), n, is_in_place(sendbuf))
        }
    }

    fn Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Alltoall", comm));
        let n = c.peer_count();
        if is_in_place(sendbuf) {
            // Every rank reads others' blocks while they are overwritten: send from
            // a packed copy of the receive buffer.
            let (len, ti) = match datatype::describe(recvcount, recvtype) {
                Ok(x) => x,
                Err((class, detail)) => return fail(&c, "MPI_Alltoall", class, detail),
            };
            let mut copy = Vec::new();
            // SAFETY: the receive buffer holds n blocks.
            unsafe { datatype::pack(recvbuf as *const u8, n * recvcount.max(0) as usize, &ti, &mut copy) };
            // SAFETY: forwarded; the copy holds n packed blocks of `len` bytes.
            return unsafe {
                exchange_uniform("MPI_Alltoall", Pattern::AllToAll, &c,
                    (copy.as_ptr().cast(), len as c_int, 0x4c00_010d), n,
                    (recvbuf, recvcount, recvtype), n, false)
            };
        }
        // SAFETY: forwarded from the C caller.
        unsafe {
            exchange_uniform("MPI_Alltoall", Pattern::AllToAll, &c, (sendbuf, sendcount, sendtype), n,
                (recvbuf, recvcount, recvtype), n, false)
        }
    }

    fn Gatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { gather_v("MPI_Gatherv", true, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm) }
    }

    fn Allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { gather_v("MPI_Allgatherv", false, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0, comm) }
    }

    fn Scatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let call = "MPI_Scatterv";
        let c = tri!(comm_for(call, comm));
        let n = c.peer_count();
        let is_root = c.is_root(root);
        let sti = match datatype::describe(0, sendtype) {
            Ok((_, t)) => t,
            Err(_) if !is_root => TypeInfo::basic(Elements { kind: mpcrs::Kind::U8, size: 1 }),
            Err((class, detail)) => return fail(&c, call, class, detail),
        };
        let send = if is_root {
            // SAFETY: counts and displacements hold one entry per rank at the root.
            Some(unsafe { stage_v(sendbuf as *mut u8, c_array(sendcounts, n), c_array(displs, n), &sti, true) })
        } else {
            None
        };
        let mut scratch = Vec::new();
        let (rptr, rlen, rstage) = if is_root && is_in_place(recvbuf) {
            let l = send.as_ref().map_or(0, |s| s.counts[root as usize]);
            scratch.resize(l, 0u8);
            (scratch.as_mut_ptr(), l, None)
        } else {
            let (rlen, rti) = match datatype::describe(recvcount, recvtype) {
                Ok(x) => x,
                Err((class, detail)) => return fail(&c, call, class, detail),
            };
            // SAFETY: the receive buffer holds `recvcount` elements.
            let (p, st) = unsafe { Staging::recv(recvbuf.cast(), recvcount as usize, &rti, false) };
            (p, rlen, st)
        };
        let layout = match &send {
            Some(s) => Layout::Varying { counts: &s.counts, displs: &s.displs },
            None => Layout::Uniform(0),
        };
        let sptr = send.as_ref().map_or(std::ptr::null(), |s| s.ptr as *const u8);
        // SAFETY: staged or user areas sized by their layouts, alive until we return.
        let r = unsafe { raw::exchange(&c, call, Pattern::Scatter { root: root as usize }, sptr, layout, rptr, Layout::Uniform(rlen)) };
        if r.is_ok() {
            if let Some(s) = rstage {
                s.finish(rlen);
            }
        }
        ret_on(&c, r)
    }

    fn Alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Alltoallv";
        let c = tri!(comm_for(call, comm));
        let n = c.peer_count();
        // MPI_IN_PLACE ignores the send type (MPI_DATATYPE_NULL is usual).
        let sendtype = if is_in_place(sendbuf) { recvtype } else { sendtype };
        let (sti, rti) = match (datatype::describe(0, sendtype), datatype::describe(0, recvtype)) {
            (Ok((_, s)), Ok((_, r))) => (s, r),
            (Err((class, detail)), _) | (_, Err((class, detail))) => return fail(&c, call, class, detail),
        };
        // SAFETY: one count and displacement per rank on both sides.
        let (rc, rd) = unsafe { (c_array(recvcounts, n), c_array(rdispls, n)) };
        if rc.len() < n || rd.len() < n {
            return fail(&c, call, ErrorClass::Arg, "the receive counts or displacements are NULL".into());
        }
        // MPI_IN_PLACE: the blocks go out of a copy of the receive buffer,
        // which the exchange overwrites (non-contiguous types are packed into
        // a copy anyway).
        let mut copy = Vec::new();
        // SAFETY: the receive buffer holds every block its layout names.
        let send = unsafe {
            if is_in_place(sendbuf) {
                let from = if rti.is_contiguous() {
                    let span = (0..n).map(|j| (rd[j].max(0) as usize + rc[j].max(0) as usize) * rti.size).max().unwrap_or(0);
                    copy.extend_from_slice(std::slice::from_raw_parts(recvbuf as *const u8, span));
                    copy.as_mut_ptr()
                } else {
                    recvbuf.cast()
                };
                stage_v(from, rc, rd, &rti, true)
            } else {
                let (sc, sd) = (c_array(sendcounts, n), c_array(sdispls, n));
                if sc.len() < n || sd.len() < n {
                    return fail(&c, call, ErrorClass::Arg, "the send counts or displacements are NULL".into());
                }
                stage_v(sendbuf as *mut u8, sc, sd, &sti, true)
            }
        };
        // SAFETY: as above.
        let recv = unsafe { stage_v(recvbuf.cast(), rc, rd, &rti, false) };
        // SAFETY: staged or user areas sized by their layouts.
        let r = unsafe {
            raw::exchange(&c, call, Pattern::AllToAll, send.ptr,
                Layout::Varying { counts: &send.counts, displs: &send.displs }, recv.ptr,
                Layout::Varying { counts: &recv.counts, displs: &recv.displs })
        };
        if r.is_ok() {
            if let Some(s) = recv.stage {
                s.finish(usize::MAX);
            }
        }
        ret_on(&c, r)
    }

    fn Op_create(user_fn: Option<MPI_User_function>, commute: c_int, op: *mut MPI_Op) -> c_int {
        let Some(func) = user_fn else {
            return ErrorClass::Arg as c_int;
        };
        let Some(mut st) = rank_state() else {
            return ErrorClass::Other as c_int;
        };
        let h = st.add_op(UserOp { func: UserFn::Int(func), commute: commute != 0 });
        // SAFETY: writable by contract.
        unsafe { *op = h };
        MPI_SUCCESS
    }

    fn Op_create_c(user_fn: Option<MPI_User_function_c>, commute: c_int, op: *mut MPI_Op) -> c_int {
        let Some(func) = user_fn else {
            return ErrorClass::Arg as c_int;
        };
        let Some(mut st) = rank_state() else {
            return ErrorClass::Other as c_int;
        };
        let h = st.add_op(UserOp { func: UserFn::Large(func), commute: commute != 0 });
        // SAFETY: writable by contract.
        unsafe { *op = h };
        MPI_SUCCESS
    }

    fn Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op) -> c_int {
        let call = "MPI_Reduce_local";
        let w = tri!(comm_for(call, MPI_COMM_WORLD));
        let (len, ti) = match datatype::describe(count, datatype) {
            Ok(x) => x,
            Err((class, detail)) => return fail(&w, call, class, detail),
        };
        let Some(el) = ti.elem else {
            return fail(&w, call, ErrorClass::Type, "reductions need a datatype made of one basic type".into());
        };
        let Some(o) = op_of(op, datatype, el) else {
            return fail(&w, call, ErrorClass::Op, format!("invalid op handle {op:#x}"));
        };
        if let Err((class, detail)) = o.check(el.kind) {
            return fail(&w, call, class, detail);
        }
        let n = count as usize;
        let mut input = Vec::new();
        let mut inout = Vec::new();
        // SAFETY: both buffers hold `count` elements of the type, by contract.
        unsafe {
            datatype::pack(inbuf.cast(), n, &ti, &mut input);
            datatype::pack(inoutbuf as *const u8, n, &ti, &mut inout);
        }
        debug_assert_eq!(inout.len(), len);
        o.apply(el.kind, &input, &mut inout);
        // SAFETY: as above.
        unsafe { datatype::unpack(&inout, inoutbuf.cast(), n, &ti) };
        MPI_SUCCESS
    }

    fn Op_commutative(op: MPI_Op, commute: *mut c_int) -> c_int {
        let c = match op {
            0x5800_0001..=0x5800_000e => true,
            h => match rank_state().and_then(|st| st.user_op(h)) {
                Some(u) => u.commute,
                None => {
                    let w = tri!(comm_for("MPI_Op_commutative", MPI_COMM_WORLD));
                    return fail(&w, "MPI_Op_commutative", ErrorClass::Op, format!("invalid op handle {op:#x}"));
                }
            },
        };
        // SAFETY: writable by contract.
        unsafe { *commute = c as c_int };
        MPI_SUCCESS
    }

    fn Op_free(op: *mut MPI_Op) -> c_int {
        // SAFETY: readable and writable by contract.
        let h = unsafe { *op };
        if rank_state().is_some_and(|mut st| st.free_op(h)) {
            // SAFETY: writable by contract.
            unsafe { *op = MPI_OP_NULL };
            MPI_SUCCESS
        } else {
            ErrorClass::Op as c_int
        }
    }
}

/// Gatherv (`rooted`) and Allgatherv.
#[allow(clippy::too_many_arguments)]
unsafe fn gather_v(
    call: &'static str,
    rooted: bool,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let c = tri!(comm_for(call, comm));
    let n = c.peer_count();
    let me = c.rank() as usize;
    let receives = !rooted || c.is_root(root);
    let in_place = is_in_place(sendbuf);
    let recv = if receives {
        let rti = match datatype::describe(0, recvtype) {
            Ok((_, t)) => t,
            Err((class, detail)) => return fail(&c, call, class, detail),
        };
        // SAFETY: counts and displacements hold one entry per rank where receiving.
        Some(unsafe {
            stage_v(
                recvbuf.cast(),
                c_array(recvcounts, n),
                c_array(displs, n),
                &rti,
                in_place,
            )
        })
    } else {
        None
    };
    let (sptr, slen, _sstage) = if in_place && receives {
        let r = recv.as_ref().expect("receiving");
        (
            r.ptr.wrapping_add(r.displs[me]) as *const u8,
            r.counts[me],
            None,
        )
    } else {
        let (slen, sti) = match datatype::describe(sendcount, sendtype) {
            Ok(x) => x,
            Err((class, detail)) => return fail(&c, call, class, detail),
        };
        // SAFETY: the send buffer holds `sendcount` elements.
        let (p, st) = unsafe { Staging::send(sendbuf.cast(), sendcount as usize, &sti) };
        (p, slen, st)
    };
    let (rptr, layout) = match &recv {
        Some(r) => (
            r.ptr,
            Layout::Varying {
                counts: &r.counts,
                displs: &r.displs,
            },
        ),
        None => (std::ptr::null_mut(), Layout::Uniform(0)),
    };
    let pattern = if rooted {
        Pattern::Gather {
            root: root as usize,
        }
    } else {
        Pattern::AllGather
    };
    // SAFETY: staged or user areas sized by their layouts, alive until we return.
    let r = unsafe { raw::exchange(&c, call, pattern, sptr, Layout::Uniform(slen), rptr, layout) };
    if r.is_ok() {
        if let Some(s) = recv.and_then(|r| r.stage) {
            s.finish(usize::MAX);
        }
    }
    ret_on(&c, r)
}

/// Reduce_scatter and Reduce_scatter_block: counts in elements, one per rank.
unsafe fn reduce_scatter(
    call: &'static str,
    c: &Communicator,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[c_int],
    t: MPI_Datatype,
    op: MPI_Op,
) -> c_int {
    let total: c_int = counts.iter().map(|&x| x.max(0)).sum();
    let (len, ti) = match datatype::describe(total, t) {
        Ok(x) => x,
        Err((class, detail)) => return fail(c, call, class, detail),
    };
    let Some(el) = ti.elem else {
        return fail(
            c,
            call,
            ErrorClass::Type,
            "reductions need a datatype made of one basic type".into(),
        );
    };
    let Some(o) = op_of(op, t, el) else {
        return fail(
            c,
            call,
            ErrorClass::Op,
            format!("invalid op handle {op:#x}"),
        );
    };
    let me = c.rank() as usize;
    let in_place = is_in_place(sendbuf);
    let mine = counts.get(me).copied().unwrap_or(0).max(0) as usize;
    // In place, the input is the whole receive buffer.
    let src: *const c_void = if in_place {
        recvbuf as *const c_void
    } else {
        sendbuf
    };
    // SAFETY: the input holds `total` elements.
    let (sptr, _sstage) = unsafe { Staging::send(src.cast(), total as usize, &ti) };
    let mut scratch = Vec::new();
    let (rptr, rstage) = if in_place {
        scratch.resize(mine * ti.size, 0u8);
        (scratch.as_mut_ptr(), None)
    } else {
        // SAFETY: the receive buffer holds this rank's count.
        unsafe { Staging::recv(recvbuf.cast(), mine, &ti, false) }
    };
    let byte_counts: Vec<usize> = counts
        .iter()
        .map(|&x| x.max(0) as usize * ti.size)
        .collect();
    let _ = len;
    // SAFETY: staged or user areas sized by the counts.
    let el = reduced_unit(&o, t, el);
    let r = unsafe { raw::reduce_scatter(c, call, sptr, rptr, &byte_counts, el, &o) };
    if r.is_ok() {
        if in_place {
            // SAFETY: the receive buffer starts with this rank's block.
            unsafe { datatype::unpack(&scratch, recvbuf.cast(), mine, &ti) };
        } else if let Some(s) = rstage {
            s.finish(usize::MAX);
        }
    }
    ret_on(c, r)
}

mpi_fn! {
    fn Alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Alltoallw";
        let c = tri!(comm_for(call, comm));
        let n = c.peer_count();
        // Every block has its own type and a displacement in bytes: pack each send
        // block into one buffer, exchange packed blocks, unpack each received one.
        // MPI_IN_PLACE: the send arrays are ignored; the blocks go out of the
        // receive buffer (packed below, before the exchange overwrites it).
        let in_place = is_in_place(sendbuf);
        let (sendbuf, sendcounts, sdispls, sendtypes) = if in_place {
            (recvbuf as *const c_void, recvcounts, rdispls, recvtypes)
        } else {
            (sendbuf, sendcounts, sdispls, sendtypes)
        };
        // SAFETY: one entry per rank in every array, by contract (or NULL, refused).
        let (sc, sd, st, rc, rd, rt) = unsafe {
            (
                c_array(sendcounts, n),
                c_array(sdispls, n),
                c_array(sendtypes, n),
                c_array(recvcounts, n),
                c_array(rdispls, n),
                c_array(recvtypes, n),
            )
        };
        if [sc.len(), sd.len(), st.len(), rc.len(), rd.len(), rt.len()].iter().any(|&l| l < n) {
            return fail(&c, call, ErrorClass::Arg, "a count, displacement or type array is NULL".into());
        }
        let mut packed = Vec::new();
        let mut s_counts = Vec::with_capacity(n);
        let mut s_displs = Vec::with_capacity(n);
        for j in 0..n {
            let ti = match datatype::describe(sc[j], st[j]) {
                Ok((_, t)) => t,
                Err((class, detail)) => return fail(&c, call, class, detail),
            };
            s_displs.push(packed.len());
            // SAFETY: block j lies at byte displacement sd[j] of the send buffer.
            unsafe { datatype::pack((sendbuf as *const u8).add(sd[j].max(0) as usize), sc[j].max(0) as usize, &ti, &mut packed) };
            s_counts.push(packed.len() - s_displs[j]);
        }
        let mut r_types = Vec::with_capacity(n);
        let mut r_counts = Vec::with_capacity(n);
        let mut r_displs = Vec::with_capacity(n);
        let mut at = 0;
        for j in 0..n {
            let (len, ti) = match datatype::describe(rc[j], rt[j]) {
                Ok(x) => x,
                Err((class, detail)) => return fail(&c, call, class, detail),
            };
            r_displs.push(at);
            r_counts.push(len);
            at += len;
            r_types.push(ti);
        }
        let mut incoming = vec![0u8; at];
        // SAFETY: both packed areas are sized by their layouts.
        let r = unsafe {
            raw::exchange(&c, call, Pattern::AllToAll, packed.as_ptr(),
                Layout::Varying { counts: &s_counts, displs: &s_displs }, incoming.as_mut_ptr(),
                Layout::Varying { counts: &r_counts, displs: &r_displs })
        };
        if r.is_ok() {
            for j in 0..n {
                let data = &incoming[r_displs[j]..r_displs[j] + r_counts[j]];
                // SAFETY: block j lies at byte displacement rd[j] of the receive buffer.
                unsafe { datatype::unpack(data, (recvbuf as *mut u8).add(rd[j].max(0) as usize), rc[j].max(0) as usize, &r_types[j]) };
            }
        }
        ret_on(&c, r)
    }
}
