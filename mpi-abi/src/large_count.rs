//! MPI-4's large-count variants (`_c`): counts as MPI_Count, displacements as
//! MPI_Count or MPI_Aint. Counts that fit in an `int` take the ordinary call's
//! path unchanged. Larger ones are carried by a datatype instead: `count`
//! elements of `t` become one element of a contiguous type (one block of an
//! indexed type where a displacement goes with it), made for the call and
//! freed after it, so no count is ever narrowed. A size the address space
//! cannot hold fails with MPI_ERR_COUNT.

use std::os::raw::{c_int, c_void};

use mpcrs::ErrorClass;

use crate::ctypes::MPI_Count;
use crate::datatype::{self, TypeInfo};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::type_queries::{extent_as_count, size_as_count, type_of};
use crate::types::{combiner, store_env};

/// An argument error of `call`, through MPI_COMM_WORLD's handler.
fn arg_error(call: &'static str, class: ErrorClass, detail: String) -> c_int {
    match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(&w, call, class, detail),
        Err(code) => code,
    }
}

/// A count as `usize`, or MPI_ERR_COUNT naming the call.
fn count(call: &'static str, v: MPI_Count, what: &str) -> Result<usize, c_int> {
    usize::try_from(v)
        .map_err(|_| arg_error(call, ErrorClass::Count, format!("negative {what} {v}")))
}

/// Refuses types whose bytes do not fit in the address space.
fn bounded(call: &'static str, t: TypeInfo) -> Result<TypeInfo, c_int> {
    if t.size > isize::MAX as usize || t.extent.unsigned_abs() > isize::MAX as usize / 2 {
        return Err(arg_error(
            call,
            ErrorClass::Count,
            format!("a datatype of {} bytes does not fit in memory", t.size),
        ));
    }
    Ok(t)
}

/// `count` elements of `old`, checked to fit in memory before anything is built.
fn contiguous_of(call: &'static str, n: usize, old: &TypeInfo) -> Result<TypeInfo, c_int> {
    let fits =
        n.checked_mul(old.size).is_some() && n.checked_mul(old.extent.unsigned_abs()).is_some();
    if !fits {
        return Err(arg_error(
            call,
            ErrorClass::Count,
            format!(
                "{n} elements of {} bytes overflow the address space",
                old.size
            ),
        ));
    }
    bounded(call, datatype::contiguous(n, old))
}

/// The envelope's integers, if every one fits in an `int` (what
/// MPI_Type_get_contents can return); `None` otherwise.
fn ints_of(v: &[MPI_Count]) -> Option<Vec<c_int>> {
    v.iter().map(|&x| c_int::try_from(x).ok()).collect()
}

/// A type made for one call, freed when the call returns.
struct Widened(MPI_Datatype);

impl Widened {
    /// `n` elements of `t` as one element of a committed contiguous type.
    fn contiguous(call: &'static str, n: MPI_Count, t: MPI_Datatype) -> Result<Widened, c_int> {
        let n = count(call, n, "count")?;
        let old = type_of(call, t)?;
        if !old.committed {
            return Err(arg_error(
                call,
                ErrorClass::Type,
                format!("datatype {t:#x} is not committed (MPI_Type_commit)"),
            ));
        }
        let ti = TypeInfo {
            committed: true,
            ..contiguous_of(call, n, &old)?
        };
        Ok(Widened(rank_state().expect("inside a rank").add_type(ti)))
    }

    /// `n` elements of `t` starting `displ` elements into the buffer, as one
    /// element of a committed type (a v-collective's block).
    fn block(
        call: &'static str,
        n: MPI_Count,
        displ: MPI_Aint,
        t: &TypeInfo,
    ) -> Result<Widened, c_int> {
        let n = count(call, n, "count")?;
        let at = (displ as isize).checked_mul(t.extent).ok_or_else(|| {
            arg_error(
                call,
                ErrorClass::Arg,
                format!("displacement {displ} overflows"),
            )
        })?;
        contiguous_of(call, n, t)?;
        let ti = TypeInfo {
            committed: true,
            ..bounded(call, datatype::hindexed(&[(at, n)], t))?
        };
        Ok(Widened(rank_state().expect("inside a rank").add_type(ti)))
    }
}

impl Drop for Widened {
    fn drop(&mut self) {
        if let Some(mut st) = rank_state() {
            st.free_type(self.0);
        }
    }
}

/// Whether a count fits the ordinary call.
fn small(n: MPI_Count) -> Option<c_int> {
    c_int::try_from(n).ok()
}

/// A (count, datatype) argument as the ordinary call takes it: the count
/// itself if it fits an int, else one element of a type made for the call
/// (freed when this is dropped, after the call: a pending operation keeps
/// its own pin on it).
pub(crate) struct Pair {
    pub(crate) n: c_int,
    pub(crate) t: MPI_Datatype,
    _held: Option<Widened>,
}

/// `n` elements of `t` for the ordinary call.
pub(crate) fn pair(call: &'static str, n: MPI_Count, t: MPI_Datatype) -> Result<Pair, c_int> {
    if let Some(n) = small(n) {
        return Ok(Pair { n, t, _held: None });
    }
    let w = Widened::contiguous(call, n, t)?;
    Ok(Pair {
        n: 1,
        t: w.0,
        _held: Some(w),
    })
}

/// A send buffer's pair: ignored (whatever its count) with MPI_IN_PLACE.
pub(crate) fn send_pair(
    call: &'static str,
    buf: *const c_void,
    n: MPI_Count,
    t: MPI_Datatype,
) -> Result<Pair, c_int> {
    if is_in_place(buf) {
        return Ok(Pair {
            n: 0,
            t,
            _held: None,
        });
    }
    pair(call, n, t)
}

/// Handles of the predefined ops (MPI_MAX ... MPI_NO_OP).
const PREDEFINED_OPS: std::ops::RangeInclusive<MPI_Op> = 0x5800_0001..=0x5800_000e;

/// A reduction's pair. A count beyond int is carried by a contiguous type
/// only under a predefined op, which reduces the type's basic elements; a
/// user function would be handed that type instead of the program's.
pub(crate) fn reduced(
    call: &'static str,
    n: MPI_Count,
    t: MPI_Datatype,
    op: MPI_Op,
) -> Result<Pair, c_int> {
    if small(n).is_none() && !PREDEFINED_OPS.contains(&op) {
        return Err(arg_error(
            call,
            ErrorClass::Count,
            format!(
                "count {n} does not fit in an int, which a user-defined op's function is given"
            ),
        ));
    }
    pair(call, n, t)
}

/// A count the ordinary call carries as an int, or MPI_ERR_COUNT naming the call.
pub(crate) fn int(call: &'static str, v: MPI_Count, what: &str) -> Result<c_int, c_int> {
    c_int::try_from(v).map_err(|_| {
        arg_error(
            call,
            ErrorClass::Count,
            format!("{what} {v} does not fit in an int, which this call carries it as"),
        )
    })
}

/// `n` counts or displacements the ordinary call takes as ints (empty for a
/// NULL array or `n` 0), or MPI_ERR_COUNT naming the call.
///
/// # Safety
/// `p` is NULL or holds `n` entries.
pub(crate) unsafe fn ints(
    call: &'static str,
    p: *const MPI_Count,
    n: usize,
    what: &str,
) -> Result<Vec<c_int>, c_int> {
    // SAFETY: by contract.
    let v = unsafe { c_array(p, n) };
    v.iter()
        .enumerate()
        .map(|(i, &x)| int(call, x, &format!("{what}[{i}]")))
        .collect()
}

pub(crate) use crate::nbc::at;

mpi_fn! {
    fn Get_count_c(status: *const MPI_Status, datatype: MPI_Datatype, count_: *mut MPI_Count) -> c_int {
        let t = tri!(type_of("MPI_Get_count_c", datatype));
        // SAFETY: `status` readable, `count` writable by contract.
        unsafe {
            let bytes = status_bytes(&*status);
            *count_ = match t.size as u64 {
                0 => 0,
                size if bytes.is_multiple_of(size) => (bytes / size) as MPI_Count,
                _ => MPI_UNDEFINED as MPI_Count,
            };
        }
        MPI_SUCCESS
    }

    fn Get_elements_c(status: *const MPI_Status, datatype: MPI_Datatype, count_: *mut MPI_Count) -> c_int {
        // SAFETY: forwarded (MPI_Get_elements_x has the same meaning).
        unsafe { crate::status::PMPI_Get_elements_x(status, datatype, count_) }
    }

    fn Type_size_c(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { size_as_count("MPI_Type_size_c", datatype, size) }
    }

    fn Type_get_extent_c(datatype: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { extent_as_count("MPI_Type_get_extent_c", datatype, false, lb, extent) }
    }

    fn Type_get_true_extent_c(datatype: MPI_Datatype, true_lb: *mut MPI_Count, true_extent: *mut MPI_Count) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { extent_as_count("MPI_Type_get_true_extent_c", datatype, true, true_lb, true_extent) }
    }

    fn Type_contiguous_c(count_: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let call = "MPI_Type_contiguous_c";
        let old = tri!(type_of(call, oldtype));
        let n = tri!(count(call, count_, "count"));
        let t = tri!(contiguous_of(call, n, &old));
        store_env(t, combiner::CONTIGUOUS, ints_of(&[count_]), vec![], &[oldtype], newtype)
    }

    fn Type_create_hindexed_c(count_: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let call = "MPI_Type_create_hindexed_c";
        let old = tri!(type_of(call, oldtype));
        let n = tri!(count(call, count_, "count"));
        // SAFETY: `count` entries each, by contract.
        let (bl, ds) = unsafe { (c_array(array_of_blocklengths, n), c_array(array_of_displacements, n)) };
        let mut p = Vec::with_capacity(n);
        for (&b, &d) in bl.iter().zip(ds) {
            let b = tri!(count(call, b, "block length"));
            tri!(contiguous_of(call, b, &old));
            p.push((d as isize, b));
        }
        let t = tri!(bounded(call, datatype::hindexed(&p, &old)));
        let ints = ints_of(&[&[count_][..], bl].concat());
        store_env(t, combiner::HINDEXED, ints, ds.iter().map(|&d| d as isize).collect(), &[oldtype], newtype)
    }

    fn Type_create_indexed_block_c(count_: MPI_Count, blocklength: MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let call = "MPI_Type_create_indexed_block_c";
        let old = tri!(type_of(call, oldtype));
        let n = tri!(count(call, count_, "count"));
        let b = tri!(count(call, blocklength, "block length"));
        tri!(contiguous_of(call, b, &old));
        // SAFETY: `count` entries, by contract.
        let ds = unsafe { c_array(array_of_displacements, n) };
        let mut p = Vec::with_capacity(n);
        for &d in ds {
            let at = tri!((d as isize).checked_mul(old.extent).ok_or_else(|| arg_error(
                call, ErrorClass::Arg, format!("displacement {d} overflows"))));
            p.push((at, b));
        }
        let t = tri!(bounded(call, datatype::hindexed(&p, &old)));
        let ints = ints_of(&[&[count_, blocklength][..], ds].concat());
        store_env(t, combiner::INDEXED_BLOCK, ints, vec![], &[oldtype], newtype)
    }

    fn Send_c(buf: *const c_void, count_: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { send_c("MPI_Send_c", buf, count_, datatype, dest, tag, comm, false) }
    }

    fn Ssend_c(buf: *const c_void, count_: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { send_c("MPI_Ssend_c", buf, count_, datatype, dest, tag, comm, true) }
    }

    fn Recv_c(buf: *mut c_void, count_: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        if let Some(n) = small(count_) {
            // SAFETY: forwarded from the C caller.
            return unsafe { crate::p2p::PMPI_Recv(buf, n, datatype, source, tag, comm, status) };
        }
        let w = tri!(Widened::contiguous("MPI_Recv_c", count_, datatype));
        // SAFETY: as above; the status counts bytes, so MPI_Get_count with the
        // program's datatype reads it as for the ordinary call.
        unsafe { crate::p2p::PMPI_Recv(buf, 1, w.0, source, tag, comm, status) }
    }

    fn Bcast_c(buffer: *mut c_void, count_: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        if let Some(n) = small(count_) {
            // SAFETY: forwarded from the C caller.
            return unsafe { crate::coll::PMPI_Bcast(buffer, n, datatype, root, comm) };
        }
        let w = tri!(Widened::contiguous("MPI_Bcast_c", count_, datatype));
        // SAFETY: as above.
        unsafe { crate::coll::PMPI_Bcast(buffer, 1, w.0, root, comm) }
    }

    fn Alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let call = "MPI_Alltoallv_c";
        let c = tri!(comm_for(call, comm));
        let n = c.peer_count();
        let in_place = is_in_place(sendbuf);
        // SAFETY: one entry per peer each, by contract (the send arrays are
        // ignored with MPI_IN_PLACE).
        let (sc, sd, rc, rd) = unsafe {
            (
                if in_place { &[][..] } else { c_array(sendcounts, n) },
                if in_place { &[][..] } else { c_array(sdispls, n) },
                c_array(recvcounts, n),
                c_array(rdispls, n),
            )
        };
        let ints = |v: &[i64]| v.iter().map(|&x| c_int::try_from(x).ok()).collect::<Option<Vec<c_int>>>();
        if let (Some(sc), Some(sd), Some(rc), Some(rd)) = (ints(sc), ints(sd), ints(rc), ints(rd)) {
            let (scp, sdp) = if in_place { (std::ptr::null(), std::ptr::null()) } else { (sc.as_ptr(), sd.as_ptr()) };
            // SAFETY: the same arguments as ints.
            return unsafe { crate::coll::PMPI_Alltoallv(sendbuf, scp, sdp, sendtype, recvbuf, rc.as_ptr(), rd.as_ptr(), recvtype, comm) };
        }
        // Beyond int: one type per block carries its count and displacement,
        // exchanged by MPI_Alltoallw with unit counts.
        let rti = tri!(type_of(call, recvtype));
        let sti = if in_place { rti.clone() } else { tri!(type_of(call, sendtype)) };
        let mut held = Vec::with_capacity(2 * n);
        let mut sts = Vec::with_capacity(n);
        let mut rts = Vec::with_capacity(n);
        for j in 0..n {
            if !in_place {
                let w = tri!(Widened::block(call, sc[j], sd[j], &sti));
                sts.push(w.0);
                held.push(w);
            }
            let w = tri!(Widened::block(call, rc[j], rd[j], &rti));
            rts.push(w.0);
            held.push(w);
        }
        let ones = vec![1; n];
        let zeros = vec![0; n];
        let (scp, sdp, stp) = if in_place {
            (std::ptr::null(), std::ptr::null(), std::ptr::null())
        } else {
            (ones.as_ptr(), zeros.as_ptr(), sts.as_ptr())
        };
        // SAFETY: every block is described by its type at displacement 0.
        unsafe { crate::coll::PMPI_Alltoallw(sendbuf, scp, sdp, stp, recvbuf, ones.as_ptr(), zeros.as_ptr(), rts.as_ptr(), comm) }
    }
}

/// MPI_Send_c and MPI_Ssend_c: a count that fits an int goes as it is, a
/// larger one as one element of a contiguous type of `count_` elements.
///
/// # Safety
/// As MPI_Send: `buf` holds `count_` elements of `datatype`.
#[allow(clippy::too_many_arguments)]
unsafe fn send_c(
    call: &'static str,
    buf: *const c_void,
    count_: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    synchronous: bool,
) -> c_int {
    if let Some(n) = small(count_) {
        // SAFETY: forwarded from the caller.
        return unsafe {
            crate::p2p::send_impl(call, buf, n, datatype, dest, tag, comm, synchronous)
        };
    }
    let w = tri!(Widened::contiguous(call, count_, datatype));
    // SAFETY: the same bytes, described by one element of `w`.
    unsafe { crate::p2p::send_impl(call, buf, 1, w.0, dest, tag, comm, synchronous) }
}
