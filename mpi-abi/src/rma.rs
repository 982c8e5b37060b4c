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
use crate::windows::{published_window, win_fail, win_for};

/// MPI_NO_OP: the origin's buffer is not read.
const MPI_NO_OP: MPI_Op = 0x5800_000e;

/// A (count, datatype) argument of a window call: its packed bytes, its
/// element kind when it has one, and its description, which a predefined
/// contiguous type (the common case, on every call) goes without.
struct Arg {
    count: usize,
    len: usize,
    elem: Option<Elements>,
    ti: Option<Box<TypeInfo>>,
}

/// Looks a (count, datatype) argument up; errors go to the window's handler.
#[inline(always)]
fn arg(w: &Window, call: &'static str, count: c_int, t: MPI_Datatype) -> Result<Arg, c_int> {
    if let (Some(el), true) = (datatype::predefined_contiguous(t), count >= 0) {
        return Ok(Arg {
            count: count as usize,
            len: count as usize * el.size,
            elem: Some(el),
            ti: None,
        });
    }
    match datatype::describe(count, t) {
        Ok((len, ti)) => Ok(Arg {
            count: count as usize,
            len,
            elem: ti.elem,
            ti: Some(Box::new(ti)),
        }),
        Err((class, detail)) => Err(win_fail(w, call, class, detail)),
    }
}

impl Arg {
    /// The description of a type with gaps; `None` when the bytes are the
    /// buffer as it lies.
    fn gaps(&self) -> Option<&TypeInfo> {
        self.ti.as_deref().filter(|ti| !ti.is_contiguous())
    }

    /// The byte blocks of the argument from a target displacement:
    /// (offset, bytes), adjacent blocks merged.
    #[inline(always)]
    fn blocks(&self) -> Blocks {
        let Some(ti) = self.gaps() else {
            return Blocks::one(self.len as u64);
        };
        let mut out: Vec<(i64, u64)> = Vec::with_capacity(self.count * ti.blocks.len());
        for i in 0..self.count {
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
        Blocks::Many(out)
    }
}

/// A target layout: one block (or none) without an allocation, or many.
enum Blocks {
    One([(i64, u64); 1], usize),
    Many(Vec<(i64, u64)>),
}

impl Blocks {
    fn one(len: u64) -> Blocks {
        Blocks::One([(0, len)], (len > 0) as usize)
    }
}

impl std::ops::Deref for Blocks {
    type Target = [(i64, u64)];
    fn deref(&self) -> &Self::Target {
        match self {
            Blocks::One(b, n) => &b[..*n],
            Blocks::Many(v) => v,
        }
    }
}

/// The origin's bytes: its buffer when contiguous, else a packed copy.
///
/// # Safety
/// `buf` holds the argument's elements.
#[inline(always)]
unsafe fn origin_bytes(buf: *const c_void, a: &Arg) -> (*const u8, Option<Vec<u8>>) {
    let Some(ti) = a.gaps() else {
        return (buf.cast(), None);
    };
    let mut v = Vec::new();
    // SAFETY: forwarded.
    unsafe { datatype::pack(buf.cast(), a.count, ti, &mut v) };
    (v.as_ptr(), Some(v))
}

/// A pointer handed to a completion closure.
struct SendPtr(*mut u8);
// SAFETY: the buffer is the program's, written only by the completion of the
// operation it lent it to (MPI's buffer rules keep it valid until then).
unsafe impl Send for SendPtr {}

/// Where a result lands when the window's synchronization completes it: the
/// program's buffer, or a scratch area and the closure that unpacks it there.
///
/// # Safety
/// `buf` holds the argument's elements until the operation completes.
unsafe fn result_area(buf: *mut c_void, a: &Arg) -> (*mut u8, Option<Finish>) {
    let Some(ti) = a.gaps() else {
        return (buf.cast(), None);
    };
    let count = a.count;
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

/// Where a result lands when the program's wait on a request completes it:
/// the program's buffer, or a staging area the request entry unpacks.
///
/// # Safety
/// `buf` holds the argument's elements until the request completes.
unsafe fn request_area(buf: *mut c_void, a: &Arg) -> (*mut u8, Option<Staging>) {
    match a.gaps() {
        None => (buf.cast(), None),
        // SAFETY: forwarded.
        Some(ti) => unsafe { Staging::recv(buf.cast(), a.count, ti, false) },
    }
}

/// Element kind of an accumulate (a derived type of one basic kind takes
/// that kind's arithmetic; others only MPI_REPLACE and MPI_NO_OP).
fn elements(a: &Arg) -> Elements {
    a.elem.unwrap_or(Elements {
        kind: Kind::Opaque,
        size: 1,
    })
}

/// The bytes of an origin and a target that are both of predefined
/// contiguous types and of the same, nonzero length: the common case of
/// MPI_Put and MPI_Get (their fast paths), found without describing either
/// argument.
#[inline(always)]
fn contiguous_bytes(
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_count: c_int,
    target_datatype: MPI_Datatype,
) -> Option<usize> {
    let o = datatype::predefined_contiguous(origin_datatype)?;
    let t = datatype::predefined_contiguous(target_datatype)?;
    let len = usize::try_from(target_count).ok()? * t.size;
    (len > 0 && usize::try_from(origin_count).ok()? * o.size == len).then_some(len)
}

/// Checks that origin and target move the same bytes.
#[inline(always)]
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
#[inline(always)]
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
    let o = tri!(arg(&w, call, origin_count, origin_datatype));
    let t = tri!(arg(&w, call, target_count, target_datatype));
    tri!(same_bytes(&w, call, o.len, t.len));
    // SAFETY: the origin buffer holds its elements (C contract).
    let (data, keep) = unsafe { origin_bytes(origin_addr, &o) };
    // SAFETY: MPI keeps the origin buffer unmodified until the operation completes.
    let r = unsafe {
        w.put(
            call,
            data,
            keep,
            target_rank,
            target_disp as isize,
            &t.blocks(),
        )
    };
    match request {
        Some(out) => {
            let r = r.map(|q| q.unwrap_or_else(|| RawRequest::completed(mpcrs::Status::empty())));
            request_handle(&w, call, r, None, out)
        }
        None => crate::windows::win_ret(&w, r.map(|_| ())),
    }
}

/// MPI_Get and MPI_Rget.
///
/// # Safety
/// The C arguments of MPI_Get; `request` writable when given.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
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
    let o = tri!(arg(&w, call, origin_count, origin_datatype));
    let t = tri!(arg(&w, call, target_count, target_datatype));
    tri!(same_bytes(&w, call, o.len, t.len));
    let disp = target_disp as isize;
    match request {
        Some(out) => {
            // SAFETY: the origin buffer is lent until the request completes;
            // a staging moves into the request entry, whose wait unpacks it.
            let (into, staging) = unsafe { request_area(origin_addr, &o) };
            // SAFETY: as above.
            let r = unsafe { w.get(call, into, target_rank, disp, &t.blocks(), None) };
            request_handle(&w, call, r, staging, out)
        }
        None => {
            // SAFETY: the origin buffer is lent until the epoch completes.
            let (into, finish) = unsafe { result_area(origin_addr, &o) };
            // SAFETY: as above.
            let r = unsafe { w.get(call, into, target_rank, disp, &t.blocks(), finish) };
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
    let t = tri!(arg(&w, call, target_count, target_datatype));
    let el = elements(&t);
    // MPI_NO_OP reads no origin: its buffer may be anything.
    let (data, keep) = if op == MPI_NO_OP && result.is_some() {
        let zeros = vec![0u8; t.len];
        (zeros.as_ptr(), Some(zeros))
    } else {
        let o = tri!(arg(&w, call, origin_count, origin_datatype));
        tri!(same_bytes(&w, call, o.len, t.len));
        if let (Some(oe), Some(te), true) = (o.elem, t.elem, t.len > 0) {
            if oe.kind != te.kind {
                return win_fail(
                    &w,
                    call,
                    ErrorClass::Type,
                    "origin and target datatypes are of different basic types".into(),
                );
            }
        }
        // SAFETY: the origin buffer holds its elements (C contract).
        unsafe { origin_bytes(origin_addr, &o) }
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
        Some((buf, count, rt)) => {
            let r = tri!(arg(&w, call, count, rt));
            tri!(same_bytes(&w, call, r.len, t.len));
            if request.is_some() {
                // SAFETY: the result buffer is lent until the request completes.
                let (into, st) = unsafe { request_area(buf, &r) };
                staging = st;
                Some((into, None))
            } else {
                // SAFETY: the result buffer is lent until the epoch completes.
                Some(unsafe { result_area(buf, &r) })
            }
        }
    };
    let blocks = t.blocks();
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
    fn Put(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int, fast {
        let w = published_window(win)?;
        let len = contiguous_bytes(origin_count, origin_datatype, target_count, target_datatype)?;
        // SAFETY: the origin buffer holds `len` bytes (C contract).
        unsafe { w.put_direct(origin_addr.cast(), target_rank, target_disp as isize, len) }.then_some(MPI_SUCCESS)
    } {
        // SAFETY: forwarded from the C caller.
        unsafe { put("MPI_Put", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, None) }
    }

    fn Rput(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { put("MPI_Rput", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, Some(request)) }
    }

    fn Get(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int, fast {
        let w = published_window(win)?;
        let len = contiguous_bytes(origin_count, origin_datatype, target_count, target_datatype)?;
        // SAFETY: the origin buffer has room for `len` bytes (C contract).
        unsafe { w.get_direct(origin_addr.cast(), target_rank, target_disp as isize, len) }.then_some(MPI_SUCCESS)
    } {
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
        let described = |count: usize, ti: TypeInfo| Arg {
            count,
            len: count * ti.size,
            elem: ti.elem,
            ti: Some(Box::new(ti)),
        };
        let int = datatype::info(0x4c00_0405).unwrap();
        assert_eq!(&*described(3, int.clone()).blocks(), &[(0, 12)]);
        let v = datatype::hvector(2, 1, 12, &int);
        // Element 1 starts at the extent (16), right after element 0's last block.
        assert_eq!(
            &*described(2, v.clone()).blocks(),
            &[(0, 4), (12, 8), (28, 4)]
        );
        assert!(described(0, v).blocks().is_empty());
    }
}
