//! Derived datatype calls (constructors, commit/free, extents) and pack/unpack.

use std::os::raw::{c_int, c_void};

use mpcrs::ErrorClass;

use std::sync::Arc;

use crate::datatype::{self, Distribution, Envelope, TypeInfo};
use crate::export::{mpi_fn, tri};
use crate::handles::*;

const MPI_ORDER_C: c_int = 56;
const MPI_ORDER_FORTRAN: c_int = 57;

/// The type behind `old` for a constructor, or the MPI_ERR_TYPE code.
fn old_type(call: &'static str, old: MPI_Datatype) -> Result<TypeInfo, c_int> {
    datatype::info(old).ok_or_else(|| {
        arg_error(
            call,
            ErrorClass::Type,
            format!("invalid datatype handle {old:#x}"),
        )
    })
}

/// An argument error, through MPI_COMM_WORLD's handler.
fn arg_error(call: &'static str, class: ErrorClass, detail: String) -> c_int {
    match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(&w, call, class, detail),
        Err(code) => code,
    }
}

/// MPI's constructor codes (MPI_COMBINER_*).
pub(crate) mod combiner {
    use std::os::raw::c_int;
    pub const NAMED: c_int = 1;
    pub const DUP: c_int = 2;
    pub const CONTIGUOUS: c_int = 3;
    pub const VECTOR: c_int = 4;
    pub const HVECTOR: c_int = 6;
    pub const INDEXED: c_int = 7;
    pub const HINDEXED: c_int = 9;
    pub const INDEXED_BLOCK: c_int = 10;
    pub const STRUCT: c_int = 12;
    pub const SUBARRAY: c_int = 13;
    pub const DARRAY: c_int = 14;
    pub const F90_REAL: c_int = 15;
    pub const F90_COMPLEX: c_int = 16;
    pub const F90_INTEGER: c_int = 17;
    pub const RESIZED: c_int = 18;
    pub const HINDEXED_BLOCK: c_int = 19;
}

/// Stores a new type with the constructor call that made it; `ints` is
/// `None` when a count of a large-count constructor does not fit in an `int`.
pub(crate) fn store_env(
    mut t: TypeInfo,
    combiner: c_int,
    ints: impl Into<Option<Vec<c_int>>>,
    aints: Vec<isize>,
    types: &[MPI_Datatype],
    out: *mut MPI_Datatype,
) -> c_int {
    let ints = ints.into();
    let large = ints.is_none();
    let ints = ints.unwrap_or_default();
    let types = types
        .iter()
        .map(|&h| {
            (
                h,
                datatype::predefined(h)
                    .is_none()
                    .then(|| datatype::info(h))
                    .flatten(),
            )
        })
        .collect();
    t.envelope = Some(Arc::new(Envelope {
        combiner,
        ints,
        aints,
        types,
        large,
    }));
    store(t, out)
}

fn store(t: TypeInfo, out: *mut MPI_Datatype) -> c_int {
    let h = rank_state().expect("inside a rank").add_type(t);
    // SAFETY: `out` is writable by the callers' contract.
    unsafe { *out = h };
    MPI_SUCCESS
}

fn nonneg(call: &'static str, v: c_int, what: &str) -> Result<usize, c_int> {
    usize::try_from(v)
        .map_err(|_| arg_error(call, ErrorClass::Count, format!("negative {what} {v}")))
}

mpi_fn! {
    fn Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
        base.wrapping_add(disp)
    }

    fn Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
        addr1.wrapping_sub(addr2)
    }

    fn Type_contiguous(count: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_contiguous", oldtype));
        let n = tri!(nonneg("MPI_Type_contiguous", count, "count"));
        store_env(datatype::contiguous(n, &old), combiner::CONTIGUOUS, vec![count], vec![], &[oldtype], newtype)
    }

    fn Type_vector(count: c_int, blocklength: c_int, stride: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_vector", oldtype));
        let n = tri!(nonneg("MPI_Type_vector", count, "count"));
        let b = tri!(nonneg("MPI_Type_vector", blocklength, "block length"));
        store_env(datatype::hvector(n, b, stride as isize * old.extent, &old), combiner::VECTOR, vec![count, blocklength, stride], vec![], &[oldtype], newtype)
    }

    fn Type_create_hvector(count: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_create_hvector", oldtype));
        let n = tri!(nonneg("MPI_Type_create_hvector", count, "count"));
        let b = tri!(nonneg("MPI_Type_create_hvector", blocklength, "block length"));
        store_env(datatype::hvector(n, b, stride as isize, &old), combiner::HVECTOR, vec![count, blocklength], vec![stride as isize], &[oldtype], newtype)
    }

    fn Type_indexed(count: c_int, blocklengths: *const c_int, displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_indexed", oldtype));
        let n = tri!(nonneg("MPI_Type_indexed", count, "count"));
        // SAFETY: `count` entries each, by contract.
        let (bl, ds) = unsafe { (c_array(blocklengths, n), c_array(displacements, n)) };
        let p: Vec<(isize, usize)> = bl.iter().zip(ds).map(|(&b, &d)| (d as isize * old.extent, b.max(0) as usize)).collect();
        let ints = [&[count][..], bl, ds].concat();
        store_env(datatype::hindexed(&p, &old), combiner::INDEXED, ints, vec![], &[oldtype], newtype)
    }

    fn Type_create_hindexed(count: c_int, blocklengths: *const c_int, displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_create_hindexed", oldtype));
        let n = tri!(nonneg("MPI_Type_create_hindexed", count, "count"));
        // SAFETY: `count` entries each, by contract.
        let (bl, ds) = unsafe { (c_array(blocklengths, n), c_array(displacements, n)) };
        let p: Vec<(isize, usize)> = bl.iter().zip(ds).map(|(&b, &d)| (d as isize, b.max(0) as usize)).collect();
        let ints = [&[count][..], bl].concat();
        store_env(datatype::hindexed(&p, &old), combiner::HINDEXED, ints, ds.iter().map(|&d| d as isize).collect(), &[oldtype], newtype)
    }

    fn Type_create_indexed_block(count: c_int, blocklength: c_int, displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_create_indexed_block", oldtype));
        let n = tri!(nonneg("MPI_Type_create_indexed_block", count, "count"));
        let b = tri!(nonneg("MPI_Type_create_indexed_block", blocklength, "block length"));
        // SAFETY: `count` entries, by contract.
        let ds = unsafe { c_array(displacements, n) };
        let p: Vec<(isize, usize)> = ds.iter().map(|&d| (d as isize * old.extent, b)).collect();
        let ints = [&[count, blocklength][..], ds].concat();
        store_env(datatype::hindexed(&p, &old), combiner::INDEXED_BLOCK, ints, vec![], &[oldtype], newtype)
    }

    fn Type_create_struct(count: c_int, blocklengths: *const c_int, displacements: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: forwarded.
        unsafe { structure("MPI_Type_create_struct", count, blocklengths, displacements, types, newtype) }
    }

    fn Type_create_resized(oldtype: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_create_resized", oldtype));
        store_env(datatype::resized(&old, lb as isize, extent as isize), combiner::RESIZED, vec![], vec![lb as isize, extent as isize], &[oldtype], newtype)
    }

    fn Type_create_subarray(ndims: c_int, sizes: *const c_int, subsizes: *const c_int, starts: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let call = "MPI_Type_create_subarray";
        let old = tri!(old_type(call, oldtype));
        let nd = tri!(nonneg(call, ndims, "dimension count"));
        // SAFETY: `ndims` entries each, by contract.
        let (sz, sub, st) = unsafe { (c_array(sizes, nd), c_array(subsizes, nd), c_array(starts, nd)) };
        for d in 0..nd {
            if sz[d] <= 0 || sub[d] < 0 || st[d] < 0 || st[d] + sub[d] > sz[d] {
                return arg_error(call, ErrorClass::Arg, format!(
                    "dimension {d}: subarray of {} from {} does not fit in {}", sub[d], st[d], sz[d]));
            }
        }
        let c_order = match order {
            MPI_ORDER_C => true,
            MPI_ORDER_FORTRAN => false,
            o => return arg_error(call, ErrorClass::Arg, format!("invalid order {o}")),
        };
        let u = |v: &[c_int]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
        let ints = [&[ndims][..], sz, sub, st, &[order]].concat();
        store_env(datatype::subarray(&u(sz), &u(sub), &u(st), c_order, &old), combiner::SUBARRAY, ints, vec![], &[oldtype], newtype)
    }

    fn Type_dup(oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_dup", oldtype));
        let rc = store_env(TypeInfo { committed: old.committed, ..old }, combiner::DUP, vec![], vec![], &[oldtype], newtype);
        if rc != MPI_SUCCESS {
            return rc;
        }
        // SAFETY: just written.
        unsafe { crate::type_attrs::copy_attributes(oldtype, newtype) }
    }

    fn Type_commit(datatype: *mut MPI_Datatype) -> c_int {
        // SAFETY: readable by contract.
        let h = unsafe { *datatype };
        if datatype::predefined(h).is_some() || rank_state().is_some_and(|mut st| st.commit_type(h)) {
            MPI_SUCCESS
        } else {
            arg_error("MPI_Type_commit", ErrorClass::Type, format!("invalid datatype handle {h:#x}"))
        }
    }

    fn Type_free(datatype: *mut MPI_Datatype) -> c_int {
        // SAFETY: readable and writable by contract.
        let h = unsafe { *datatype };
        if datatype::predefined(h).is_none() {
            tri!(match crate::type_attrs::drop_attributes(h) {
                MPI_SUCCESS => Ok(()),
                rc => Err(rc),
            });
        }
        if rank_state().is_some_and(|mut st| st.free_type(h)) {
            // SAFETY: writable by contract.
            unsafe { *datatype = 0x0c00_0000 }; // MPI_DATATYPE_NULL
            MPI_SUCCESS
        } else {
            arg_error("MPI_Type_free", ErrorClass::Type, format!("{h:#x} is not a derived datatype"))
        }
    }

    fn Type_size(datatype: MPI_Datatype, size: *mut c_int) -> c_int {
        let t = tri!(old_type("MPI_Type_size", datatype));
        // A size beyond `int` is MPI_UNDEFINED (MPI_Type_size_c gives it).
        // SAFETY: writable by contract.
        unsafe { *size = c_int::try_from(t.size).unwrap_or(MPI_UNDEFINED) };
        MPI_SUCCESS
    }

    fn Type_get_extent(datatype: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) -> c_int {
        let t = tri!(old_type("MPI_Type_get_extent", datatype));
        // SAFETY: writable by contract.
        unsafe {
            *lb = t.lb as MPI_Aint;
            *extent = t.extent as MPI_Aint;
        }
        MPI_SUCCESS
    }

    fn Type_get_true_extent(datatype: MPI_Datatype, true_lb: *mut MPI_Aint, true_extent: *mut MPI_Aint) -> c_int {
        let t = tri!(old_type("MPI_Type_get_true_extent", datatype));
        // SAFETY: writable by contract.
        unsafe {
            *true_lb = t.true_lb as MPI_Aint;
            *true_extent = t.true_extent as MPI_Aint;
        }
        MPI_SUCCESS
    }

    fn Pack_size(incount: c_int, datatype: MPI_Datatype, _comm: MPI_Comm, size: *mut c_int) -> c_int {
        let t = tri!(old_type("MPI_Pack_size", datatype));
        // SAFETY: writable by contract.
        unsafe { *size = incount.max(0) * t.size as c_int };
        MPI_SUCCESS
    }

    fn Pack(inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, position: *mut c_int, _comm: MPI_Comm) -> c_int {
        let t = tri!(old_type("MPI_Pack", datatype));
        let n = tri!(nonneg("MPI_Pack", incount, "count"));
        let mut packed = Vec::new();
        // SAFETY: `inbuf` holds `incount` elements by contract.
        unsafe { datatype::pack(inbuf.cast(), n, &t, &mut packed) };
        // SAFETY: `position` readable and writable by contract.
        let pos = unsafe { *position }.max(0) as usize;
        if pos + packed.len() > outsize.max(0) as usize {
            return arg_error("MPI_Pack", ErrorClass::Truncate, format!(
                "{} bytes at position {pos} exceed the output buffer of {outsize}", packed.len()));
        }
        // SAFETY: checked to fit in the `outsize` bytes of `outbuf`.
        unsafe {
            std::ptr::copy_nonoverlapping(packed.as_ptr(), outbuf.cast::<u8>().add(pos), packed.len());
            *position = (pos + packed.len()) as c_int;
        }
        MPI_SUCCESS
    }

    fn Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype, _comm: MPI_Comm) -> c_int {
        let t = tri!(old_type("MPI_Unpack", datatype));
        let n = tri!(nonneg("MPI_Unpack", outcount, "count"));
        // SAFETY: `position` readable by contract.
        let pos = unsafe { *position }.max(0) as usize;
        let need = n * t.size;
        if pos + need > insize.max(0) as usize {
            return arg_error("MPI_Unpack", ErrorClass::Truncate, format!(
                "{need} bytes at position {pos} exceed the input buffer of {insize}"));
        }
        // SAFETY: checked to lie within the `insize` bytes of `inbuf`.
        let data = unsafe { std::slice::from_raw_parts(inbuf.cast::<u8>().add(pos), need) };
        // SAFETY: `outbuf` holds `outcount` elements by contract.
        unsafe {
            datatype::unpack(data, outbuf.cast(), n, &t);
            *position = (pos + need) as c_int;
        }
        MPI_SUCCESS
    }
}

/// MPI_Type_create_struct and MPI-1's MPI_Type_struct: MPI_LB and MPI_UB
/// members set the bounds instead of adding data.
///
/// # Safety
/// The arrays hold `count` entries.
unsafe fn structure(
    call: &'static str,
    count: c_int,
    blocklengths: *const c_int,
    displacements: *const MPI_Aint,
    types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let n = tri!(nonneg(call, count, "count"));
    // SAFETY: `count` entries each, by contract.
    let (bl, ds, ts) = unsafe {
        (
            c_array(blocklengths, n),
            c_array(displacements, n),
            c_array(types, n),
        )
    };
    let mut members = Vec::with_capacity(n);
    let (mut lb, mut ub) = (None::<isize>, None::<isize>);
    for i in 0..n {
        match ts[i] {
            datatype::MPI_LB => lb = Some(lb.map_or(ds[i] as isize, |l| l.min(ds[i] as isize))),
            datatype::MPI_UB => ub = Some(ub.map_or(ds[i] as isize, |u| u.max(ds[i] as isize))),
            t => {
                let t = tri!(old_type(call, t));
                members.push((ds[i] as isize, bl[i].max(0) as usize, t));
            }
        }
    }
    let mut t = datatype::structure(&members);
    if lb.is_some() || ub.is_some() {
        let l = lb.unwrap_or(t.lb);
        let u = ub.unwrap_or(t.lb + t.extent);
        t.lb = l;
        t.extent = u - l;
    }
    let ints = [&[count][..], bl].concat();
    store_env(
        t,
        combiner::STRUCT,
        ints,
        ds.iter().map(|&d| d as isize).collect(),
        ts,
        newtype,
    )
}

mpi_fn! {
    fn Type_create_hindexed_block(count: c_int, blocklength: c_int, displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let call = "MPI_Type_create_hindexed_block";
        let old = tri!(old_type(call, oldtype));
        let n = tri!(nonneg(call, count, "count"));
        let b = tri!(nonneg(call, blocklength, "block length"));
        // SAFETY: `count` entries, by contract.
        let ds = unsafe { c_array(displacements, n) };
        let p: Vec<(isize, usize)> = ds.iter().map(|&d| (d as isize, b)).collect();
        store_env(datatype::hindexed(&p, &old), combiner::HINDEXED_BLOCK, vec![count, blocklength], ds.iter().map(|&d| d as isize).collect(), &[oldtype], newtype)
    }

    fn Type_hvector(count: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype) }
    }

    fn Type_hindexed(count: c_int, blocklengths: *mut c_int, displacements: *mut MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype) }
    }

    fn Type_struct(count: c_int, blocklengths: *mut c_int, displacements: *mut MPI_Aint, types: *mut MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { structure("MPI_Type_struct", count, blocklengths, displacements, types, newtype) }
    }

    fn Type_create_darray(size: c_int, rank: c_int, ndims: c_int, gsizes: *const c_int, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let call = "MPI_Type_create_darray";
        let old = tri!(old_type(call, oldtype));
        let nd = tri!(nonneg(call, ndims, "dimension count"));
        // SAFETY: `ndims` entries each, by contract.
        let (gs, di, da, ps) = unsafe { (c_array(gsizes, nd), c_array(distribs, nd), c_array(dargs, nd), c_array(psizes, nd)) };
        let grid: i64 = ps.iter().map(|&p| p as i64).product();
        if grid != size as i64 || rank < 0 || rank >= size || gs.iter().chain(ps).any(|&x| x <= 0) {
            return arg_error(call, ErrorClass::Arg, format!("rank {rank} of {size} in a process grid {ps:?} over {gs:?}"));
        }
        let mut dist = Vec::with_capacity(nd);
        for d in 0..nd {
            let darg = if da[d] == -49767 { 0 } else { da[d] }; // MPI_DISTRIBUTE_DFLT_DARG
            dist.push(match di[d] {
                121 => Distribution::Block(darg.max(0) as usize),
                122 => Distribution::Cyclic(darg.max(0) as usize),
                123 => Distribution::None,
                x => return arg_error(call, ErrorClass::Arg, format!("invalid distribution {x} in dimension {d}")),
            });
        }
        let c_order = match order {
            MPI_ORDER_C => true,
            MPI_ORDER_FORTRAN => false,
            o => return arg_error(call, ErrorClass::Arg, format!("invalid order {o}")),
        };
        // The process grid is row-major whatever the array's order.
        let mut coords = vec![0usize; nd];
        let mut r = rank as usize;
        for d in (0..nd).rev() {
            coords[d] = r % ps[d] as usize;
            r /= ps[d] as usize;
        }
        let u = |v: &[c_int]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
        let t = datatype::darray(&u(gs), &dist, &u(ps), &coords, c_order, &old);
        let ints = [&[size, rank, ndims][..], gs, di, da, ps, &[order]].concat();
        store_env(t, combiner::DARRAY, ints, vec![], &[oldtype], newtype)
    }

    fn Type_create_f90_integer(r: c_int, newtype: *mut MPI_Datatype) -> c_int {
        // The smallest C integer with `r` decimal digits.
        let t = match r {
            ..=2 => 0x4c00_0137,  // MPI_INT8_T
            3..=4 => 0x4c00_0238, // MPI_INT16_T
            5..=9 => 0x4c00_0439, // MPI_INT32_T
            10..=18 => 0x4c00_083a, // MPI_INT64_T
            _ => return arg_error("MPI_Type_create_f90_integer", ErrorClass::Arg, format!("no integer type has {r} digits")),
        };
        f90("MPI_Type_create_f90_integer", t, combiner::F90_INTEGER, vec![r], newtype)
    }

    fn Type_create_f90_real(p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int {
        let t = match (p, r) {
            (..=6, ..=37) => 0x4c00_040a, // MPI_FLOAT
            (..=15, ..=307) => 0x4c00_080b, // MPI_DOUBLE
            _ => return arg_error("MPI_Type_create_f90_real", ErrorClass::Arg, format!("no real type has precision {p} and range {r}")),
        };
        f90("MPI_Type_create_f90_real", t, combiner::F90_REAL, vec![p, r], newtype)
    }

    fn Type_create_f90_complex(p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int {
        let t = match (p, r) {
            (..=6, ..=37) => 0x4c00_0840, // MPI_C_FLOAT_COMPLEX
            (..=15, ..=307) => 0x4c00_1041, // MPI_C_DOUBLE_COMPLEX
            _ => return arg_error("MPI_Type_create_f90_complex", ErrorClass::Arg, format!("no complex type has precision {p} and range {r}")),
        };
        f90("MPI_Type_create_f90_complex", t, combiner::F90_COMPLEX, vec![p, r], newtype)
    }

    fn Type_match_size(typeclass: c_int, size: c_int, datatype: *mut MPI_Datatype) -> c_int {
        let t = match (typeclass, size) {
            (1, 4) => 0x4c00_040a,  // REAL: MPI_FLOAT
            (1, 8) => 0x4c00_080b,  // MPI_DOUBLE
            (1, 16) => 0x4c00_100c, // MPI_LONG_DOUBLE
            (2, 1) => 0x4c00_0101,  // INTEGER: MPI_CHAR
            (2, 2) => 0x4c00_0203,  // MPI_SHORT
            (2, 4) => 0x4c00_0405,  // MPI_INT
            (2, 8) => 0x4c00_0807,  // MPI_LONG
            (3, 8) => 0x4c00_0840,  // COMPLEX: MPI_C_FLOAT_COMPLEX
            (3, 16) => 0x4c00_1041, // MPI_C_DOUBLE_COMPLEX
            (3, 32) => 0x4c00_2042, // MPI_C_LONG_DOUBLE_COMPLEX
            _ => return arg_error("MPI_Type_match_size", ErrorClass::Arg, format!("no type of class {typeclass} has {size} bytes")),
        };
        // SAFETY: writable by contract.
        unsafe { *datatype = t };
        MPI_SUCCESS
    }

    fn Get_address(location: *const c_void, address: *mut MPI_Aint) -> c_int {
        // SAFETY: writable by contract.
        unsafe { *address = location as MPI_Aint };
        MPI_SUCCESS
    }

    fn Address(location: *mut c_void, address: *mut MPI_Aint) -> c_int {
        // SAFETY: writable by contract.
        unsafe { *address = location as MPI_Aint };
        MPI_SUCCESS
    }
}

/// The predefined type `t` under an F90 constructor's envelope (committed:
/// MPI says such types need no commit).
fn f90(
    call: &'static str,
    t: MPI_Datatype,
    comb: c_int,
    ints: Vec<c_int>,
    out: *mut MPI_Datatype,
) -> c_int {
    let ti = tri!(old_type(call, t));
    let ti = TypeInfo {
        committed: true,
        ..ti
    };
    store_env(ti, comb, ints, vec![], &[], out)
}
