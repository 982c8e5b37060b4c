//! One-sided data calls: MPI_Put, MPI_Get, MPI_Accumulate, MPI_Get_accumulate,
//! MPI_Fetch_and_op, MPI_Compare_and_swap and the request-based MPI_R*
//! variants. Origin buffers of any datatype travel packed; the target's
//! (count, datatype) becomes the list of byte blocks the runtime writes or
//! reads at the target.

use std::os::raw::{c_int, c_void};

use mpcrs::raw::{Elements, Finish, RawRequest, Window};
use mpcrs::{ErrorClass, Kind};

use crate::ctypes::MPI_Win;
use crate::datatype::{self, Staging, TypeInfo};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::windows::{win_fail, win_for};

/// MPI_NO_OP: the origin's buffer is not read.
const MPI_NO_OP: MPI_Op = 0x5800_000e;

/// A (count, datatype) argument of a window call, described.
fn describe(
    w: &Window,
    call: &'static str,
    count: c_int,
    t: MPI_Datatype,
) -> Result<(usize, TypeInfo), c_int> {
    datatype::describe(count, t).map_err(|(class, detail)| win_fail(w, call, class, detail))
}

/// The byte blocks of `count` elements of `ti` from a target displacement:
/// (offset, bytes), adjacent blocks merged.
fn layout(count: usize, ti: &TypeInfo) -> Vec<(i64, u64)> {
    if ti.is_contiguous() {
        let len = (count * ti.size) as u64;
        return if len > 0 { vec![(0, len)] } else { Vec::new() };
    }
    let mut out: Vec<(i64, u64)> = Vec::with_capacity(count * ti.blocks.len());
    for i in 0..count {
        let base = i as i64 * ti.extent as i64;
        for &(o, l) in ti.blocks.iter() {
            if l == 0 {
                continue;
            }
            let at = base + o as i64;
            match out.last_mut() {
                Some(last) if last.0 + last.1 as i64 == at => last.1 += l as u64,
                _ => out.push((at, l as u64)),
            }
        }
    }
    out
}

/// Bytes of `count` elements of a predefined contiguous type, without a
/// description (the common case, on every call).
fn quick(count: c_int, t: MPI_Datatype) -> Option<usize> {
    let el = datatype::predefined_contiguous(t)?;
    (count >= 0).then(|| count as usize * el.size)
}

/// The origin's bytes: its buffer when contiguous, else a packed copy.
///
/// # Safety
/// `buf` holds `count` elements of `ti`.
unsafe fn origin_bytes(
    buf: *const c_void,
    count: usize,
    ti: &TypeInfo,
) -> (*const u8, Option<Vec<u8>>) {
    if ti.is_contiguous() {
        return (buf.cast(), None);
    }
    let mut v = Vec::new();
    // SAFETY: forwarded.
    unsafe { datatype::pack(buf.cast(), count, ti, &mut v) };
    (v.as_ptr(), Some(v))
}

/// A pointer handed to a completion closure.
struct SendPtr(*mut u8);
// SAFETY: the buffer is the program's, written only by the completion of the
// operation it lent it to (MPI's buffer rules keep it valid until then).
unsafe impl Send for SendPtr {}

/// Where a result lands: the program's buffer, or a scratch area and the
/// closure that unpacks it there.
///
/// # Safety
/// `buf` holds `count` elements of `ti` until the operation completes.
unsafe fn result_area(buf: *mut c_void, count: usize, ti: &TypeInfo) -> (*mut u8, Option<Finish>) {
    if ti.is_contiguous() {
        return (buf.cast(), None);
    }
    let mut scratch = vec![0u8; count * ti.size].into_boxed_slice();
    let at = scratch.as_mut_ptr();
    let user = SendPtr(buf.cast());
    let ti = ti.clone();
    let finish = move || {
        let user = user;
        // SAFETY: the operation completed: the scratch holds its bytes, and
        // the program's buffer is still lent to it.
        unsafe { datatype::unpack(&scratch, user.0, count, &ti) };
    };
    (at, Some(Box::new(finish)))
}

/// Element kind of an accumulate on `ti` (a derived type of one basic kind
/// takes that kind's arithmetic; others only MPI_REPLACE and MPI_NO_OP).
fn elements(ti: &TypeInfo) -> Elements {
    ti.elem.unwrap_or(Elements {
        kind: Kind::Opaque,
        size: 1,
    })
}

/// Checks that origin and target move the same bytes.
fn same_bytes(w: &Window, call: &'static str, origin: usize, target: usize) -> Result<(), c_int> {
    if origin == target {
        return Ok(());
    }
    Err(win_fail(
        w,
        call,
        ErrorClass::Count,
        format!("the origin has {origin} bytes and the target layout {target}: the type signatures must match"),
    ))
}

/// Makes a request handle for an R* call.
fn request_handle(
    w: &Window,
    call: &'static str,
    r: mpcrs::Result<RawRequest>,
    staging: Option<Staging>,
    request: *mut MPI_Request,
) -> c_int {
    crate::p2p::start(call, w.communicator_arc(), r, staging, request)
}

/// MPI_Put and MPI_Rput.
///
/// # Safety
/// The C arguments of MPI_Put; `request` writable when given.
#[allow(clippy::too_many_arguments)]
unsafe fn put(
    call: &'static str,
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let w = tri!(win_for(call, win));
    if let (Some(olen), Some(tlen)) = (
        quick(origin_count, origin_datatype),
        quick(target_count, target_datatype),
    ) {
        // Predefined types at both ends: no description, one block.
        tri!(same_bytes(&w, call, olen, tlen));
        let one = [(0, tlen as u64)];
        let blocks = if tlen > 0 { &one[..] } else { &[] };
        // SAFETY: MPI keeps the origin buffer unmodified until the operation completes.
        let r = unsafe {
            w.put(
                call,
                origin_addr.cast(),
                None,
                target_rank,
                target_disp as isize,
                blocks,
            )
        };
        return match request {
            Some(out) => request_handle(&w, call, r, None, out),
            None => crate::windows::win_ret(&w, r.map(|_| ())),
        };
    }
    let (olen, oti) = tri!(describe(&w, call, origin_count, origin_datatype));
    let (tlen, tti) = tri!(describe(&w, call, target_count, target_datatype));
    tri!(same_bytes(&w, call, olen, tlen));
    let blocks = layout(target_count as usize, &tti);
    // SAFETY: the origin buffer holds its elements (C contract).
    let (data, keep) = unsafe { origin_bytes(origin_addr, origin_count as usize, &oti) };
    // SAFETY: MPI keeps the origin buffer unmodified until the operation completes.
    let r = unsafe { w.put(call, data, keep, target_rank, target_disp as isize, &blocks) };
    match request {
        Some(out) => request_handle(&w, call, r, None, out),
        None => crate::windows::win_ret(&w, r.map(|_| ())),
    }
}

/// MPI_Get and MPI_Rget.
///
/// # Safety
/// The C arguments of MPI_Get; `request` writable when given.
#[allow(clippy::too_many_arguments)]
unsafe fn get(
    call: &'static str,
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let w = tri!(win_for(call, win));
    if let (Some(olen), Some(tlen), None) = (
        quick(origin_count, origin_datatype),
        quick(target_count, target_datatype),
        request,
    ) {
        // Predefined types at both ends: into the buffer itself, one block.
        tri!(same_bytes(&w, call, olen, tlen));
        let one = [(0, tlen as u64)];
        let blocks = if tlen > 0 { &one[..] } else { &[] };
        // SAFETY: the origin buffer is lent until the epoch completes.
        let r = unsafe {
            w.get(
                call,
                origin_addr.cast(),
                target_rank,
                target_disp as isize,
                blocks,
                None,
            )
        };
        return crate::windows::win_ret(&w, r.map(|_| ()));
    }
    let (olen, oti) = tri!(describe(&w, call, origin_count, origin_datatype));
    let (tlen, tti) = tri!(describe(&w, call, target_count, target_datatype));
    tri!(same_bytes(&w, call, olen, tlen));
    let blocks = layout(target_count as usize, &tti);
    match request {
        Some(out) => {
            // The request's wait unpacks a staged result.
            // SAFETY: the origin buffer is lent until the request completes.
            let (into, staging) =
                unsafe { Staging::recv(origin_addr.cast(), origin_count as usize, &oti, false) };
            // SAFETY: as above; the staging moves into the request entry.
            let r = unsafe { w.get(call, into, target_rank, target_disp as isize, &blocks, None) };
            request_handle(&w, call, r, staging, out)
        }
        None => {
            // SAFETY: the origin buffer is lent until the epoch completes.
            let (into, finish) = unsafe { result_area(origin_addr, origin_count as usize, &oti) };
            // SAFETY: as above.
            let r = unsafe {
                w.get(
                    call,
                    into,
                    target_rank,
                    target_disp as isize,
                    &blocks,
                    finish,
                )
            };
            crate::windows::win_ret(&w, r.map(|_| ()))
        }
    }
}

/// MPI_Accumulate, MPI_Get_accumulate and their R* variants (`result` for
/// the getting ones).
///
/// # Safety
/// The C arguments of MPI_Get_accumulate; `request` writable when given.
#[allow(clippy::too_many_arguments)]
unsafe fn accumulate(
    call: &'static str,
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    result: Option<(*mut c_void, c_int, MPI_Datatype)>,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let w = tri!(win_for(call, win));
    let (tlen, tti) = tri!(describe(&w, call, target_count, target_datatype));
    let el = elements(&tti);
    let blocks = layout(target_count as usize, &tti);
    // MPI_NO_OP reads no origin: its buffer may be anything.
    let (data, keep) = if op == MPI_NO_OP && result.is_some() {
        let zeros = vec![0u8; tlen];
        (zeros.as_ptr(), Some(zeros))
    } else {
        let (olen, oti) = tri!(describe(&w, call, origin_count, origin_datatype));
        tri!(same_bytes(&w, call, olen, tlen));
        if let (Some(o), Some(t), true) = (oti.elem, tti.elem, tlen > 0) {
            if o.kind != t.kind {
                return win_fail(
                    &w,
                    call,
                    ErrorClass::Type,
                    "origin and target datatypes are of different basic types".into(),
                );
            }
        }
        // SAFETY: the origin buffer holds its elements (C contract).
        unsafe { origin_bytes(origin_addr, origin_count as usize, &oti) }
    };
    let Some(rop) = crate::coll::op_of(op, target_datatype, el) else {
        return win_fail(
            &w,
            call,
            ErrorClass::Op,
            format!("invalid operation handle {op:#x}"),
        );
    };
    let mut staging = None;
    let res = match result {
        None => None,
        Some((buf, count, t)) => {
            let (rlen, rti) = tri!(describe(&w, call, count, t));
            tri!(same_bytes(&w, call, rlen, tlen));
            if request.is_some() {
                // SAFETY: the result buffer is lent until the request completes.
                let (into, st) = unsafe { Staging::recv(buf.cast(), count as usize, &rti, false) };
                staging = st;
                Some((into, None))
            } else {
                // SAFETY: the result buffer is lent until the epoch completes.
                Some(unsafe { result_area(buf, count as usize, &rti) })
            }
        }
    };
    // SAFETY: the buffers stay lent until the operation completes.
    let r = unsafe {
        w.accumulate(
            call,
            data,
            keep,
            el.kind,
            el.size,
            &rop,
            target_rank,
            target_disp as isize,
            &blocks,
            res,
        )
    };
    match request {
        Some(out) => request_handle(&w, call, r, staging, out),
        None => crate::windows::win_ret(&w, r.map(|_| ())),
    }
}

mpi_fn! {
    fn Put(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { put("MPI_Put", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, None) }
    }

    fn Rput(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { put("MPI_Rput", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, Some(request)) }
    }

    fn Get(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { get("MPI_Get", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, None) }
    }

    fn Rget(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { get("MPI_Rget", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, Some(request)) }
    }

    fn Accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { accumulate("MPI_Accumulate", origin_addr, origin_count, origin_datatype, None, target_rank, target_disp, target_count, target_datatype, op, win, None) }
    }

    fn Raccumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { accumulate("MPI_Raccumulate", origin_addr, origin_count, origin_datatype, None, target_rank, target_disp, target_count, target_datatype, op, win, Some(request)) }
    }

    fn Get_accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: c_int, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        let result = Some((result_addr, result_count, result_datatype));
        // SAFETY: forwarded from the C caller.
        unsafe { accumulate("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype, result, target_rank, target_disp, target_count, target_datatype, op, win, None) }
    }

    fn Rget_accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: c_int, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let result = Some((result_addr, result_count, result_datatype));
        // SAFETY: forwarded from the C caller.
        unsafe { accumulate("MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype, result, target_rank, target_disp, target_count, target_datatype, op, win, Some(request)) }
    }

    fn Fetch_and_op(origin_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, op: MPI_Op, win: MPI_Win) -> c_int {
        let result = Some((result_addr, 1, datatype));
        // SAFETY: forwarded from the C caller.
        unsafe { accumulate("MPI_Fetch_and_op", origin_addr, 1, datatype, result, target_rank, target_disp, 1, datatype, op, win, None) }
    }

    fn Compare_and_swap(origin_addr: *const c_void, compare_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, win: MPI_Win) -> c_int {
        let call = "MPI_Compare_and_swap";
        let w = tri!(win_for(call, win));
        let Some(el) = datatype::predefined(datatype) else {
            return win_fail(&w, call, ErrorClass::Type, format!("datatype {datatype:#x} is not a predefined one"));
        };
        // SAFETY: the three buffers hold one element each (C contract).
        let r = unsafe {
            w.compare_and_swap(call, origin_addr.cast(), compare_addr.cast(), result_addr.cast(), el.size, target_rank, target_disp as isize)
        };
        crate::windows::win_ret(&w, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_layouts_merge_adjacent_blocks() {
        let int = datatype::info(0x4c00_0405).unwrap();
        assert_eq!(layout(3, &int), vec![(0, 12)]);
        let v = datatype::hvector(2, 1, 12, &int);
        // Element 1 starts at the extent (16), right after element 0's last block.
        assert_eq!(layout(2, &v), vec![(0, 4), (12, 8), (28, 4)]);
        assert_eq!(layout(0, &v), vec![]);
    }
}
