//! Derived datatype calls (constructors, commit/free, extents) and pack/unpack.

use std::os::raw::{c_int, c_void};

use mpcrs::ErrorClass;

use crate::datatype::{self, TypeInfo};
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
        store(datatype::contiguous(n, &old), newtype)
    }

    fn Type_vector(count: c_int, blocklength: c_int, stride: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_vector", oldtype));
        let n = tri!(nonneg("MPI_Type_vector", count, "count"));
        let b = tri!(nonneg("MPI_Type_vector", blocklength, "block length"));
        store(datatype::hvector(n, b, stride as isize * old.extent, &old), newtype)
    }

    fn Type_create_hvector(count: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_create_hvector", oldtype));
        let n = tri!(nonneg("MPI_Type_create_hvector", count, "count"));
        let b = tri!(nonneg("MPI_Type_create_hvector", blocklength, "block length"));
        store(datatype::hvector(n, b, stride as isize, &old), newtype)
    }

    fn Type_indexed(count: c_int, blocklengths: *const c_int, displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_indexed", oldtype));
        let n = tri!(nonneg("MPI_Type_indexed", count, "count"));
        // SAFETY: `count` entries each, by contract.
        let (bl, ds) = unsafe { (c_array(blocklengths, n), c_array(displacements, n)) };
        let p: Vec<(isize, usize)> = bl.iter().zip(ds).map(|(&b, &d)| (d as isize * old.extent, b.max(0) as usize)).collect();
        store(datatype::hindexed(&p, &old), newtype)
    }

    fn Type_create_hindexed(count: c_int, blocklengths: *const c_int, displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_create_hindexed", oldtype));
        let n = tri!(nonneg("MPI_Type_create_hindexed", count, "count"));
        // SAFETY: `count` entries each, by contract.
        let (bl, ds) = unsafe { (c_array(blocklengths, n), c_array(displacements, n)) };
        let p: Vec<(isize, usize)> = bl.iter().zip(ds).map(|(&b, &d)| (d as isize, b.max(0) as usize)).collect();
        store(datatype::hindexed(&p, &old), newtype)
    }

    fn Type_create_indexed_block(count: c_int, blocklength: c_int, displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_create_indexed_block", oldtype));
        let n = tri!(nonneg("MPI_Type_create_indexed_block", count, "count"));
        let b = tri!(nonneg("MPI_Type_create_indexed_block", blocklength, "block length"));
        // SAFETY: `count` entries, by contract.
        let ds = unsafe { c_array(displacements, n) };
        let p: Vec<(isize, usize)> = ds.iter().map(|&d| (d as isize * old.extent, b)).collect();
        store(datatype::hindexed(&p, &old), newtype)
    }

    fn Type_create_struct(count: c_int, blocklengths: *const c_int, displacements: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let n = tri!(nonneg("MPI_Type_create_struct", count, "count"));
        // SAFETY: `count` entries each, by contract.
        let (bl, ds, ts) = unsafe { (c_array(blocklengths, n), c_array(displacements, n), c_array(types, n)) };
        let mut members = Vec::with_capacity(n);
        for i in 0..n {
            let t = tri!(old_type("MPI_Type_create_struct", ts[i]));
            members.push((ds[i] as isize, bl[i].max(0) as usize, t));
        }
        store(datatype::structure(&members), newtype)
    }

    fn Type_create_resized(oldtype: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_create_resized", oldtype));
        store(datatype::resized(&old, lb as isize, extent as isize), newtype)
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
        store(datatype::subarray(&u(sz), &u(sub), &u(st), c_order, &old), newtype)
    }

    fn Type_dup(oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let old = tri!(old_type("MPI_Type_dup", oldtype));
        store(old, newtype)
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
        // SAFETY: writable by contract.
        unsafe { *size = t.size as c_int };
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
