//! What a datatype is: sizes and extents (with the MPI_Count variants and
//! MPI-1's names) and the constructor call that made it (envelope, contents).

use std::os::raw::c_int;

use mpcrs::ErrorClass;

use crate::ctypes::MPI_Count;
use crate::datatype::{self, TypeInfo};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::types::combiner;

/// The datatype `t`, or MPI_ERR_TYPE through MPI_COMM_WORLD's handler naming `call`.
pub(crate) fn type_of(call: &'static str, t: MPI_Datatype) -> Result<TypeInfo, c_int> {
    datatype::info(t).ok_or_else(|| match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(
            &w,
            call,
            ErrorClass::Type,
            format!("invalid datatype handle {t:#x}"),
        ),
        Err(code) => code,
    })
}

/// Refuses a type whose constructor's counts do not fit in `int`.
fn small_envelope(call: &'static str, t: &TypeInfo) -> Result<(), c_int> {
    if t.envelope.as_ref().is_some_and(|e| e.large) {
        let w = comm_for(call, MPI_COMM_WORLD)?;
        return Err(fail(&w, call, ErrorClass::Type, "the type was built with counts beyond int (a large-count constructor), which this library does not keep".into()));
    }
    Ok(())
}

/// MPI_Type_size_x and MPI_Type_size_c, named `call`.
///
/// # Safety
/// `size` writable.
pub(crate) unsafe fn size_as_count(
    call: &'static str,
    datatype: MPI_Datatype,
    size: *mut MPI_Count,
) -> c_int {
    let t = tri!(type_of(call, datatype));
    // SAFETY: writable by contract.
    unsafe { *size = t.size as MPI_Count };
    MPI_SUCCESS
}

/// MPI_Type_get_extent_x and _c (`true_extent`: MPI_Type_get_true_extent_x
/// and _c), named `call`.
///
/// # Safety
/// `lb` and `extent` writable.
pub(crate) unsafe fn extent_as_count(
    call: &'static str,
    datatype: MPI_Datatype,
    true_extent: bool,
    lb: *mut MPI_Count,
    extent: *mut MPI_Count,
) -> c_int {
    let t = tri!(type_of(call, datatype));
    let (l, e) = if true_extent {
        (t.true_lb, t.true_extent)
    } else {
        (t.lb, t.extent)
    };
    // SAFETY: writable by contract.
    unsafe {
        *lb = l as MPI_Count;
        *extent = e as MPI_Count;
    }
    MPI_SUCCESS
}

mpi_fn! {
    fn Type_size_x(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { size_as_count("MPI_Type_size_x", datatype, size) }
    }

    fn Type_get_extent_x(datatype: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { extent_as_count("MPI_Type_get_extent_x", datatype, false, lb, extent) }
    }

    fn Type_get_true_extent_x(datatype: MPI_Datatype, true_lb: *mut MPI_Count, true_extent: *mut MPI_Count) -> c_int {
        // SAFETY: forwarded from the C caller.
        unsafe { extent_as_count("MPI_Type_get_true_extent_x", datatype, true, true_lb, true_extent) }
    }

    fn Type_extent(datatype: MPI_Datatype, extent: *mut MPI_Aint) -> c_int {
        let t = tri!(type_of("MPI_Type_extent", datatype));
        // SAFETY: writable by contract.
        unsafe { *extent = t.extent as MPI_Aint };
        MPI_SUCCESS
    }

    fn Type_lb(datatype: MPI_Datatype, displacement: *mut MPI_Aint) -> c_int {
        let t = tri!(type_of("MPI_Type_lb", datatype));
        // SAFETY: writable by contract.
        unsafe { *displacement = t.lb as MPI_Aint };
        MPI_SUCCESS
    }

    fn Type_ub(datatype: MPI_Datatype, displacement: *mut MPI_Aint) -> c_int {
        let t = tri!(type_of("MPI_Type_ub", datatype));
        // SAFETY: writable by contract.
        unsafe { *displacement = (t.lb + t.extent) as MPI_Aint };
        MPI_SUCCESS
    }

    fn Type_get_envelope(datatype: MPI_Datatype, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, comb: *mut c_int) -> c_int {
        let t = tri!(type_of("MPI_Type_get_envelope", datatype));
        tri!(small_envelope("MPI_Type_get_envelope", &t));
        let (c, ni, na, nd) = match &t.envelope {
            Some(e) => (e.combiner, e.ints.len(), e.aints.len(), e.types.len()),
            None => (combiner::NAMED, 0, 0, 0),
        };
        // SAFETY: writable by contract.
        unsafe {
            *num_integers = ni as c_int;
            *num_addresses = na as c_int;
            *num_datatypes = nd as c_int;
            *comb = c;
        }
        MPI_SUCCESS
    }

    fn Type_get_contents(datatype: MPI_Datatype, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_datatypes: *mut MPI_Datatype) -> c_int {
        let call = "MPI_Type_get_contents";
        let t = tri!(type_of(call, datatype));
        tri!(small_envelope(call, &t));
        let Some(e) = t.envelope.as_deref() else {
            let w = tri!(comm_for(call, MPI_COMM_WORLD));
            return fail(&w, call, ErrorClass::Type, "a predefined datatype has no contents".into());
        };
        if (max_integers as usize) < e.ints.len() || (max_addresses as usize) < e.aints.len() || (max_datatypes as usize) < e.types.len() {
            let w = tri!(comm_for(call, MPI_COMM_WORLD));
            return fail(&w, call, ErrorClass::Arg, format!(
                "the arrays hold {max_integers}, {max_addresses} and {max_datatypes} entries; the type has {}, {} and {}",
                e.ints.len(), e.aints.len(), e.types.len()));
        }
        for (i, &v) in e.ints.iter().enumerate() {
            // SAFETY: `max_integers` entries, checked above.
            unsafe { *array_of_integers.add(i) = v };
        }
        for (i, &v) in e.aints.iter().enumerate() {
            // SAFETY: `max_addresses` entries, checked above.
            unsafe { *array_of_addresses.add(i) = v as MPI_Aint };
        }
        for (i, (h, derived)) in e.types.iter().enumerate() {
            // Derived types come back as new handles the program frees.
            let out = match derived {
                Some(ti) => rank_state().expect("inside a rank").add_type(ti.clone()),
                None => *h,
            };
            // SAFETY: `max_datatypes` entries, checked above.
            unsafe { *array_of_datatypes.add(i) = out };
        }
        MPI_SUCCESS
    }

    fn Type_get_envelope_c(datatype: MPI_Datatype, num_integers: *mut MPI_Count, num_addresses: *mut MPI_Count, num_large_counts: *mut MPI_Count, num_datatypes: *mut MPI_Count, comb: *mut c_int) -> c_int {
        // The constructor arguments kept are those that fit the int form.
        let (mut ni, mut na, mut nd) = (0, 0, 0);
        // SAFETY: writable ints; `comb` writable by contract.
        let rc = unsafe { PMPI_Type_get_envelope(datatype, &mut ni, &mut na, &mut nd, comb) };
        if rc == MPI_SUCCESS {
            // SAFETY: writable by contract.
            unsafe {
                *num_integers = ni as MPI_Count;
                *num_addresses = na as MPI_Count;
                *num_large_counts = 0;
                *num_datatypes = nd as MPI_Count;
            }
        }
        rc
    }

    fn Type_get_contents_c(datatype: MPI_Datatype, max_integers: MPI_Count, max_addresses: MPI_Count, _max_large_counts: MPI_Count, max_datatypes: MPI_Count, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, _array_of_large_counts: *mut MPI_Count, array_of_datatypes: *mut MPI_Datatype) -> c_int {
        // No large counts are kept (MPI_Type_get_envelope_c says 0); array
        // sizes beyond int only mean the arrays are large enough.
        let fit = |n: MPI_Count| n.clamp(0, c_int::MAX as MPI_Count) as c_int;
        // SAFETY: forwarded from the C caller.
        unsafe { PMPI_Type_get_contents(datatype, fit(max_integers), fit(max_addresses), fit(max_datatypes), array_of_integers, array_of_addresses, array_of_datatypes) }
    }

    fn Type_get_value_index(value_type: MPI_Datatype, index_type: MPI_Datatype, pair_type: *mut MPI_Datatype) -> c_int {
        let call = "MPI_Type_get_value_index";
        tri!(type_of(call, value_type));
        tri!(type_of(call, index_type));
        // SAFETY: writable by contract.
        unsafe { *pair_type = value_index_pair(value_type, index_type) };
        MPI_SUCCESS
    }
}

/// The predefined (value, index) type of MPI_MINLOC and MPI_MAXLOC for
/// these two types, or MPI_DATATYPE_NULL when MPI predefines none.
fn value_index_pair(value: MPI_Datatype, index: MPI_Datatype) -> MPI_Datatype {
    const MPI_INT: MPI_Datatype = 0x4c00_0405;
    const MPI_INTEGER: MPI_Datatype = 0x4c00_041b;
    const MPI_REAL: MPI_Datatype = 0x4c00_041c;
    const MPI_DOUBLE_PRECISION: MPI_Datatype = 0x4c00_081f;
    match (value, index) {
        (0x4c00_040a, MPI_INT) => 0x8c00_0000u32 as c_int, // MPI_FLOAT_INT
        (0x4c00_080b, MPI_INT) => 0x8c00_0001u32 as c_int, // MPI_DOUBLE_INT
        (0x4c00_0807, MPI_INT) => 0x8c00_0002u32 as c_int, // MPI_LONG_INT
        (0x4c00_0203, MPI_INT) => 0x8c00_0003u32 as c_int, // MPI_SHORT_INT
        (MPI_INT, MPI_INT) => 0x4c00_0816,                 // MPI_2INT
        (0x4c00_100c, MPI_INT) => 0x8c00_0004u32 as c_int, // MPI_LONG_DOUBLE_INT
        (MPI_INTEGER, MPI_INTEGER) => 0x4c00_0820,         // MPI_2INTEGER
        (MPI_REAL, MPI_REAL) => 0x4c00_0821,               // MPI_2REAL
        (MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION) => 0x4c00_1023, // MPI_2DOUBLE_PRECISION
        _ => 0x0c00_0000,                                  // MPI_DATATYPE_NULL
    }
}
