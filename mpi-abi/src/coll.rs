//! Collective calls and reduction ops.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use mpcrs::raw::{self, Elements, Layout, Pattern};
use mpcrs::{ErrorClass, Op};

use crate::export::mpi_fn;
use crate::handles::*;
use crate::p2p::resolve;

/// The runtime op of a handle for elements of type `t`.
fn op_of(h: MPI_Op, t: MPI_Datatype) -> Option<Op> {
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
            let size = crate::datatype::lookup(t)?.size;
            let func = u.func;
            // The C function sees (invec, inoutvec, &count, &datatype), as MPI says.
            Op::user_bytes(
                u.commute,
                Arc::new(move |input: &[u8], inout: &mut [u8]| {
                    let mut len = (inout.len() / size) as c_int;
                    let mut dt = t;
                    // SAFETY: both slices hold `len` elements of `t`; the C function
                    // reads `invec` only.
                    unsafe {
                        func(
                            input.as_ptr() as *mut c_void,
                            inout.as_mut_ptr().cast(),
                            &mut len,
                            &mut dt,
                        )
                    };
                }),
            )
        }
    })
}

/// Resolves everything a reduction needs.
fn reduction_args(
    call: &'static str,
    comm: MPI_Comm,
    count: c_int,
    t: MPI_Datatype,
    op: MPI_Op,
) -> Result<(Arc<mpcrs::Communicator>, usize, Elements, Op), c_int> {
    let (c, len, el) = resolve(call, comm, count, t)?;
    match op_of(op, t) {
        Some(o) => Ok((c, len, el, o)),
        None => Err(fail(
            &c,
            call,
            ErrorClass::Op,
            format!("invalid op handle {op:#x}"),
        )),
    }
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
        let (c, len, _) = match resolve("MPI_Bcast", comm, count, datatype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        // SAFETY: buffer lent for the call.
        ret(unsafe { raw::bcast(&c, buffer.cast(), len, root) })
    }

    fn Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) -> c_int {
        let (c, len, el, o) = match reduction_args("MPI_Reduce", comm, count, datatype, op) {
            Ok(x) => x,
            Err(code) => return code,
        };
        let send = if is_in_place(sendbuf) { recvbuf as *const u8 } else { sendbuf.cast() };
        // SAFETY: buffers lent for the call.
        ret(unsafe { raw::reduce(&c, "MPI_Reduce", send, recvbuf.cast(), len, el, &o, Some(root)) })
    }

    fn Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let (c, len, el, o) = match reduction_args("MPI_Allreduce", comm, count, datatype, op) {
            Ok(x) => x,
            Err(code) => return code,
        };
        let send = if is_in_place(sendbuf) { recvbuf as *const u8 } else { sendbuf.cast() };
        // SAFETY: buffers lent for the call.
        ret(unsafe { raw::reduce(&c, "MPI_Allreduce", send, recvbuf.cast(), len, el, &o, None) })
    }

    fn Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let (c, len, el, o) = match reduction_args("MPI_Scan", comm, count, datatype, op) {
            Ok(x) => x,
            Err(code) => return code,
        };
        let send = if is_in_place(sendbuf) { recvbuf as *const u8 } else { sendbuf.cast() };
        // SAFETY: buffers lent for the call.
        ret(unsafe { raw::scan(&c, "MPI_Scan", send, recvbuf.cast(), len, el, &o, false) })
    }

    fn Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let (c, len, el, o) = match reduction_args("MPI_Exscan", comm, count, datatype, op) {
            Ok(x) => x,
            Err(code) => return code,
        };
        let send = if is_in_place(sendbuf) { recvbuf as *const u8 } else { sendbuf.cast() };
        // SAFETY: buffers lent for the call.
        ret(unsafe { raw::scan(&c, "MPI_Exscan", send, recvbuf.cast(), len, el, &o, true) })
    }

    fn Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let call = "MPI_Gather";
        let (c, rlen) = match comm_for(call, comm) {
            Ok(c) if c.rank() == root => match resolve(call, comm, recvcount, recvtype) {
                Ok((c, l, _)) => (c, l),
                Err(code) => return code,
            },
            Ok(c) => (c, 0),
            Err(code) => return code,
        };
        let (send, slen) = if is_in_place(sendbuf) {
            // The root's own block is already in place.
            ((recvbuf as *const u8).wrapping_add(root.max(0) as usize * rlen), rlen)
        } else {
            match resolve(call, comm, sendcount, sendtype) {
                Ok((_, l, _)) => (sendbuf.cast(), l),
                Err(code) => return code,
            }
        };
        // SAFETY: buffers lent for the call, sized by their counts.
        ret(unsafe { raw::exchange(&c, call, Pattern::Gather { root: root as usize }, send, Layout::Uniform(slen), recvbuf.cast(), Layout::Uniform(rlen)) })
    }

    fn Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let call = "MPI_Scatter";
        let (c, slen) = match comm_for(call, comm) {
            Ok(c) if c.rank() == root => match resolve(call, comm, sendcount, sendtype) {
                Ok((c, l, _)) => (c, l),
                Err(code) => return code,
            },
            Ok(c) => (c, 0),
            Err(code) => return code,
        };
        let (recv, rlen) = if is_in_place(recvbuf) {
            // The root keeps its own block where it is.
            ((sendbuf as *mut u8).wrapping_add(root.max(0) as usize * slen), slen)
        } else {
            match resolve(call, comm, recvcount, recvtype) {
                Ok((_, l, _)) => (recvbuf.cast(), l),
                Err(code) => return code,
            }
        };
        // SAFETY: buffers lent for the call, sized by their counts.
        ret(unsafe { raw::exchange(&c, call, Pattern::Scatter { root: root as usize }, sendbuf.cast(), Layout::Uniform(slen), recv, Layout::Uniform(rlen)) })
    }

    fn Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Allgather";
        let (c, rlen, _) = match resolve(call, comm, recvcount, recvtype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        let (send, slen) = if is_in_place(sendbuf) {
            ((recvbuf as *const u8).wrapping_add(c.rank() as usize * rlen), rlen)
        } else {
            match resolve(call, comm, sendcount, sendtype) {
                Ok((_, l, _)) => (sendbuf.cast(), l),
                Err(code) => return code,
            }
        };
        // SAFETY: buffers lent for the call, sized by their counts.
        ret(unsafe { raw::exchange(&c, call, Pattern::AllGather, send, Layout::Uniform(slen), recvbuf.cast(), Layout::Uniform(rlen)) })
    }

    fn Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Alltoall";
        let (c, rlen, _) = match resolve(call, comm, recvcount, recvtype) {
            Ok(x) => x,
            Err(code) => return code,
        };
        // In place: send from a copy, since every rank reads others' buffers while
        // they are being overwritten.
        let staged: Option<Vec<u8>> = is_in_place(sendbuf).then(|| {
            // SAFETY: the receive buffer holds size * recvcount elements.
            unsafe { std::slice::from_raw_parts(recvbuf as *const u8, rlen * c.size() as usize) }.to_vec()
        });
        let (send, slen) = match &staged {
            Some(v) => (v.as_ptr(), rlen),
            None => match resolve(call, comm, sendcount, sendtype) {
                Ok((_, l, _)) => (sendbuf.cast(), l),
                Err(code) => return code,
            },
        };
        // SAFETY: buffers lent for the call (or the staged copy), sized by their counts.
        ret(unsafe { raw::exchange(&c, call, Pattern::AllToAll, send, Layout::Uniform(slen), recvbuf.cast(), Layout::Uniform(rlen)) })
    }

    fn Op_create(user_fn: Option<MPI_User_function>, commute: c_int, op: *mut MPI_Op) -> c_int {
        let Some(func) = user_fn else {
            return ErrorClass::Arg as c_int;
        };
        let Some(mut st) = rank_state() else {
            return ErrorClass::Other as c_int;
        };
        let h = st.add_op(UserOp { func, commute: commute != 0 });
        // SAFETY: writable by contract.
        unsafe { *op = h };
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
