//! Communicator calls.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

use mpcrs::{Comparison, ErrorClass};

use crate::attributes::{self, Kind};
use crate::export::{mpi_fn, tri};
use crate::handles::*;

pub(crate) fn store_new(c: Option<mpcrs::Communicator>, out: *mut MPI_Comm) {
    let h = match c {
        Some(c) => rank_state().expect("inside a rank").add_comm(c),
        None => MPI_COMM_NULL,
    };
    // SAFETY: `out` is writable by the callers' contract.
    unsafe { *out = h };
}

mpi_fn! {
    fn Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
        match comm_for("MPI_Comm_size", comm) {
            Ok(c) => {
                // SAFETY: writable by contract.
                unsafe { *size = c.size() };
                MPI_SUCCESS
            }
            Err(code) => code,
        }
    }

    fn Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int {
        match comm_for("MPI_Comm_rank", comm) {
            Ok(c) => {
                // SAFETY: writable by contract.
                unsafe { *rank = c.rank() };
                MPI_SUCCESS
            }
            Err(code) => code,
        }
    }

    fn Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Comm_dup", comm));
        match c.dup() {
            Ok(d) => {
                store_new(Some(d), newcomm);
                // SAFETY: just written.
                let h = unsafe { *newcomm };
                if let Err((class, detail)) = attributes::copy_all(Kind::Comm, comm, h) {
                    // A failed copy callback fails the dup: no new communicator.
                    rank_state().expect("inside a rank").free_comm(h);
                    // SAFETY: writable by contract.
                    unsafe { *newcomm = MPI_COMM_NULL };
                    return fail(&c, "MPI_Comm_dup", class, detail);
                }
                if let Some(d) = rank_state().and_then(|st| st.comm(h)) {
                    crate::errhandler::inherit(&c, &d, h);
                }
                ret(crate::topo::copy_topology(comm, h))
            }
            Err(e) => code(&e),
        }
    }

    fn Comm_split(comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Comm_split", comm));
        let color = if color == MPI_UNDEFINED { None } else { Some(color) };
        match c.split(color, key) {
            Ok(s) => {
                store_new(s, newcomm);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Comm_free(comm: *mut MPI_Comm) -> c_int {
        // SAFETY: readable and writable by contract.
        let h = unsafe { *comm };
        let c = tri!(comm_for("MPI_Comm_free", h));
        if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
            return fail(&c, "MPI_Comm_free", ErrorClass::Comm, "predefined communicators cannot be freed".into());
        }
        if let Err((class, detail)) = attributes::delete_all(Kind::Comm, h) {
            return fail(&c, "MPI_Comm_free", class, detail);
        }
        rank_state().expect("inside a rank").topos.remove(&h);
        crate::bsend_buffers::forget(h);
        if !rank_state().expect("inside a rank").free_comm(h) {
            return fail(&c, "MPI_Comm_free", ErrorClass::Comm, "predefined communicators cannot be freed".into());
        }
        crate::errhandler::set(&c, h, None);
        // SAFETY: writable by contract.
        unsafe { *comm = MPI_COMM_NULL };
        MPI_SUCCESS
    }

    fn Comm_compare(comm1: MPI_Comm, comm2: MPI_Comm, result: *mut c_int) -> c_int {
        let (a, b) = match (comm_for("MPI_Comm_compare", comm1), comm_for("MPI_Comm_compare", comm2)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(code), _) | (_, Err(code)) => return code,
        };
        let r = match a.compare(&b) {
            Comparison::Identical => MPI_IDENT,
            Comparison::Congruent => MPI_CONGRUENT,
            Comparison::Similar => MPI_SIMILAR,
            Comparison::Unequal => MPI_UNEQUAL,
        };
        // SAFETY: writable by contract.
        unsafe { *result = r };
        MPI_SUCCESS
    }
}

/// MPI_Comm_copy_attr_function.
pub type CopyAttrFn = unsafe extern "C" fn(
    oldcomm: MPI_Comm,
    keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int;
/// MPI_Comm_delete_attr_function.
pub type DeleteAttrFn = unsafe extern "C" fn(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    extra_state: *mut c_void,
) -> c_int;

pub(crate) const MPI_TAG_UB: c_int = 0x6440_0001;
pub(crate) const MPI_HOST: c_int = 0x6440_0003;
pub(crate) const MPI_IO: c_int = 0x6440_0005;
pub(crate) const MPI_WTIME_IS_GLOBAL: c_int = 0x6440_0007;
pub(crate) const MPI_UNIVERSE_SIZE: c_int = 0x6440_0009;
pub(crate) const MPI_APPNUM: c_int = 0x6440_000d;
pub(crate) const MPI_LASTUSEDCODE: c_int = 0x6440_000b;

thread_local! {
    /// MPI_LASTUSEDCODE's value, read through the pointer the call hands out.
    static LAST_USED_CODE: std::cell::Cell<c_int> = const { std::cell::Cell::new(0) };
}
const MPI_COMM_TYPE_SHARED: c_int = 1;
const MPI_MAX_OBJECT_NAME: usize = 128;

/// Values of the predefined attributes (MPI hands out pointers to them).
static TAG_UB_VALUE: c_int = mpcrs::TAG_UB;
/// Every rank of a process reads the same clock.
static WTIME_IS_GLOBAL_VALUE: c_int = 1;
static PROC_NULL_VALUE: c_int = mpcrs::PROC_NULL;
static ANY_SOURCE_VALUE: c_int = mpcrs::ANY_SOURCE;

/// The value of a predefined attribute: `None` if `k` is not one,
/// `Some(None)` for one this implementation does not set.
fn predefined_value(k: c_int) -> Option<Option<*const c_int>> {
    Some(match k {
        MPI_TAG_UB => Some(&TAG_UB_VALUE),
        MPI_WTIME_IS_GLOBAL => Some(&WTIME_IS_GLOBAL_VALUE),
        MPI_HOST => Some(&PROC_NULL_VALUE),
        MPI_IO => Some(&ANY_SOURCE_VALUE),
        MPI_LASTUSEDCODE => {
            LAST_USED_CODE.with(|v| v.set(crate::errors::last_used_code()));
            Some(LAST_USED_CODE.with(|v| v.as_ptr()) as *const c_int)
        }
        MPI_UNIVERSE_SIZE | MPI_APPNUM => None,
        _ => return None,
    })
}

/// Deletes the attributes of MPI_COMM_SELF, then of MPI_COMM_WORLD, each
/// the last set first: the first thing MPI_Finalize does (MPI-3.1 section
/// 8.7.1), while MPI is still usable by the callbacks.
pub(crate) fn delete_predefined_attributes() -> Result<(), attributes::Failure> {
    attributes::delete_all(Kind::Comm, MPI_COMM_SELF)?;
    attributes::delete_all(Kind::Comm, MPI_COMM_WORLD)
}

fn group_arg(call: &'static str, h: c_int) -> Result<mpcrs::Group, c_int> {
    match rank_state().and_then(|st| st.group(h)) {
        Some(g) => Ok(g),
        None => Err(match comm_for(call, MPI_COMM_WORLD) {
            Ok(w) => fail(
                &w,
                call,
                ErrorClass::Group,
                format!("invalid group handle {h:#x}"),
            ),
            Err(code) => code,
        }),
    }
}

pub(crate) fn store_group(g: mpcrs::Group, out: *mut c_int) -> c_int {
    let h = rank_state().expect("inside a rank").add_group(g);
    // SAFETY: writable by the callers' contract.
    unsafe { *out = h };
    MPI_SUCCESS
}

mpi_fn! {
    fn Comm_split_type(comm: MPI_Comm, split_type: c_int, key: c_int, _info: c_int, newcomm: *mut MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Comm_split_type", comm));
        // Ranks share memory when their processes run on one host: the
        // host's number is the colour.
        let color = if split_type == MPI_COMM_TYPE_SHARED { Some(mpcrs::this_node() as c_int) } else { None };
        match c.split(color, key) {
            Ok(s) => {
                store_new(s, newcomm);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Comm_create(comm: MPI_Comm, group: c_int, newcomm: *mut MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Comm_create", comm));
        let g = tri!(group_arg("MPI_Comm_create", group));
        match c.create(&g) {
            Ok(s) => {
                store_new(s, newcomm);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Comm_create_group(comm: MPI_Comm, group: c_int, tag: c_int, newcomm: *mut MPI_Comm) -> c_int {
        let c = tri!(comm_for("MPI_Comm_create_group", comm));
        let g = tri!(group_arg("MPI_Comm_create_group", group));
        if g.rank_of_world(c.world_rank()).is_none() {
            // A caller outside the group (MPI_GROUP_EMPTY, say) takes no part:
            // a local call giving MPI_COMM_NULL (MPI-3.1 section 6.4.2).
            store_new(None, newcomm);
            return MPI_SUCCESS;
        }
        match c.create_group(&g, tag) {
            Ok(s) => {
                store_new(Some(s), newcomm);
                MPI_SUCCESS
            }
            Err(e) => code(&e),
        }
    }

    fn Comm_group(comm: MPI_Comm, group: *mut c_int) -> c_int {
        let c = tri!(comm_for("MPI_Comm_group", comm));
        store_group(c.group(), group)
    }

    fn Comm_get_parent(parent: *mut MPI_Comm) -> c_int {
        // No dynamic process management: no rank was spawned by another.
        // SAFETY: writable by contract.
        unsafe { *parent = MPI_COMM_NULL };
        MPI_SUCCESS
    }

    fn Comm_set_name(comm: MPI_Comm, name: *const c_char) -> c_int {
        let c = tri!(comm_for("MPI_Comm_set_name", comm));
        // SAFETY: a NUL-terminated string by contract.
        let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        c.set_name(&n);
        MPI_SUCCESS
    }

    fn Comm_get_name(comm: MPI_Comm, name: *mut c_char, resultlen: *mut c_int) -> c_int {
        let c = tri!(comm_for("MPI_Comm_get_name", comm));
        // SAFETY: MPI specifies a buffer of MPI_MAX_OBJECT_NAME bytes.
        unsafe { crate::env::write_cstr(&c.name(), name, MPI_MAX_OBJECT_NAME, resultlen) };
        MPI_SUCCESS
    }

    fn Comm_create_keyval(copy_fn: Option<CopyAttrFn>, delete_fn: Option<DeleteAttrFn>, keyval_out: *mut c_int, extra_state: *mut c_void) -> c_int {
        let _world = tri!(comm_for("MPI_Comm_create_keyval", MPI_COMM_WORLD));
        let k = attributes::create_keyval(Kind::Comm, copy_fn, delete_fn, extra_state);
        // SAFETY: writable by contract.
        unsafe { *keyval_out = k };
        MPI_SUCCESS
    }

    fn Comm_free_keyval(keyval_inout: *mut c_int) -> c_int {
        let call = "MPI_Comm_free_keyval";
        let world = tri!(comm_for(call, MPI_COMM_WORLD));
        // SAFETY: readable and writable by contract.
        let k = unsafe { *keyval_inout };
        if let Err((class, detail)) = attributes::free_keyval(Kind::Comm, k) {
            return fail(&world, call, class, detail);
        }
        // SAFETY: writable by contract.
        unsafe { *keyval_inout = attributes::KEYVAL_INVALID };
        MPI_SUCCESS
    }

    fn Comm_set_attr(comm: MPI_Comm, keyval_in: c_int, attribute_val: *mut c_void) -> c_int {
        let call = "MPI_Comm_set_attr";
        let c = tri!(comm_for(call, comm));
        if predefined_value(keyval_in).is_some() {
            return fail(&c, call, ErrorClass::Keyval, format!("the predefined attribute {keyval_in:#x} cannot be set"));
        }
        match attributes::set(Kind::Comm, comm, keyval_in, attribute_val) {
            Ok(()) => MPI_SUCCESS,
            Err((class, detail)) => fail(&c, call, class, detail),
        }
    }

    fn Comm_get_attr(comm: MPI_Comm, keyval_in: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        let call = "MPI_Comm_get_attr";
        let c = tri!(comm_for(call, comm));
        let value = match predefined_value(keyval_in) {
            Some(p) => p.map(|p| p as *mut c_void),
            None => match attributes::get(Kind::Comm, comm, keyval_in) {
                Ok(v) => v,
                Err((class, detail)) => return fail(&c, call, class, detail),
            },
        };
        // SAFETY: `attribute_val` is a `void **` and `flag` writable, per MPI.
        unsafe {
            *flag = value.is_some() as c_int;
            if let Some(v) = value {
                *(attribute_val as *mut *mut c_void) = v;
            }
        }
        MPI_SUCCESS
    }

    fn Comm_delete_attr(comm: MPI_Comm, keyval_in: c_int) -> c_int {
        let call = "MPI_Comm_delete_attr";
        let c = tri!(comm_for(call, comm));
        if predefined_value(keyval_in).is_some() {
            return fail(&c, call, ErrorClass::Keyval, format!("the predefined attribute {keyval_in:#x} cannot be deleted"));
        }
        match attributes::delete(Kind::Comm, comm, keyval_in) {
            Ok(()) => MPI_SUCCESS,
            Err((class, detail)) => fail(&c, call, class, detail),
        }
    }

    fn Group_size(group: c_int, size: *mut c_int) -> c_int {
        let g = tri!(group_arg("MPI_Group_size", group));
        // SAFETY: writable by contract.
        unsafe { *size = g.size() as c_int };
        MPI_SUCCESS
    }

    fn Group_rank(group: c_int, rank: *mut c_int) -> c_int {
        let g = tri!(group_arg("MPI_Group_rank", group));
        let me = mpcrs::current_rank().unwrap_or(-1);
        // SAFETY: writable by contract.
        unsafe { *rank = g.rank_of_world(me).map_or(MPI_UNDEFINED, |r| r as c_int) };
        MPI_SUCCESS
    }

    fn Group_translate_ranks(group1: c_int, n: c_int, ranks1: *const c_int, group2: c_int, ranks2: *mut c_int) -> c_int {
        let g1 = tri!(group_arg("MPI_Group_translate_ranks", group1));
        let g2 = tri!(group_arg("MPI_Group_translate_ranks", group2));
        // SAFETY: `n` entries by contract.
        let r1 = unsafe { c_array(ranks1, n.max(0) as usize) };
        match g1.translate_ranks(r1, &g2) {
            Some(out) => {
                for (i, r) in out.into_iter().enumerate() {
                    // SAFETY: `n` entries by contract.
                    unsafe { *ranks2.add(i) = r };
                }
                MPI_SUCCESS
            }
            None => ErrorClass::Rank as c_int,
        }
    }

    fn Group_incl(group: c_int, n: c_int, ranks: *const c_int, newgroup: *mut c_int) -> c_int {
        let g = tri!(group_arg("MPI_Group_incl", group));
        // SAFETY: `n` entries by contract.
        match g.incl(unsafe { c_array(ranks, n.max(0) as usize) }) {
            Some(ng) => store_group(ng, newgroup),
            None => ErrorClass::Rank as c_int,
        }
    }

    fn Group_excl(group: c_int, n: c_int, ranks: *const c_int, newgroup: *mut c_int) -> c_int {
        let g = tri!(group_arg("MPI_Group_excl", group));
        // SAFETY: `n` entries by contract.
        match g.excl(unsafe { c_array(ranks, n.max(0) as usize) }) {
            Some(ng) => store_group(ng, newgroup),
            None => ErrorClass::Rank as c_int,
        }
    }

    fn Group_union(group1: c_int, group2: c_int, newgroup: *mut c_int) -> c_int {
        let (a, b) = (tri!(group_arg("MPI_Group_union", group1)), tri!(group_arg("MPI_Group_union", group2)));
        store_group(a.union(&b), newgroup)
    }

    fn Group_intersection(group1: c_int, group2: c_int, newgroup: *mut c_int) -> c_int {
        let (a, b) = (tri!(group_arg("MPI_Group_intersection", group1)), tri!(group_arg("MPI_Group_intersection", group2)));
        store_group(a.intersection(&b), newgroup)
    }

    fn Group_difference(group1: c_int, group2: c_int, newgroup: *mut c_int) -> c_int {
        let (a, b) = (tri!(group_arg("MPI_Group_difference", group1)), tri!(group_arg("MPI_Group_difference", group2)));
        store_group(a.difference(&b), newgroup)
    }

    fn Group_compare(group1: c_int, group2: c_int, result: *mut c_int) -> c_int {
        let (a, b) = (tri!(group_arg("MPI_Group_compare", group1)), tri!(group_arg("MPI_Group_compare", group2)));
        let r = match a.compare(&b) {
            Comparison::Identical | Comparison::Congruent => MPI_IDENT,
            Comparison::Similar => MPI_SIMILAR,
            Comparison::Unequal => MPI_UNEQUAL,
        };
        // SAFETY: writable by contract.
        unsafe { *result = r };
        MPI_SUCCESS
    }

    fn Group_free(group: *mut c_int) -> c_int {
        // SAFETY: readable and writable by contract.
        let h = unsafe { *group };
        if rank_state().is_some_and(|mut st| st.free_group(h)) {
            // SAFETY: writable by contract.
            unsafe { *group = MPI_GROUP_NULL };
            MPI_SUCCESS
        } else {
            ErrorClass::Group as c_int
        }
    }
}

/// MPI_DUP_FN (MPICH's symbol `MPIR_Dup_fn`): the predefined copy callback that
/// gives the new communicator the same attribute value.
///
/// # Safety
/// Called as an attribute copy callback: `attribute_val_out` is a `void **`,
/// `flag` is writable.
#[no_mangle]
pub unsafe extern "C-unwind" fn MPIR_Dup_fn(
    _oldcomm: MPI_Comm,
    _keyval: c_int,
    _extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: by the callback's contract.
    unsafe {
        *(attribute_val_out as *mut *mut c_void) = attribute_val_in;
        *flag = 1;
    }
    MPI_SUCCESS
}

mpi_fn! {
    fn Attr_put(comm: MPI_Comm, keyval_in: c_int, attribute_val: *mut c_void) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { PMPI_Comm_set_attr(comm, keyval_in, attribute_val) }
    }

    fn Attr_get(comm: MPI_Comm, keyval_in: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { PMPI_Comm_get_attr(comm, keyval_in, attribute_val, flag) }
    }

    fn Attr_delete(comm: MPI_Comm, keyval_in: c_int) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { PMPI_Comm_delete_attr(comm, keyval_in) }
    }

    fn Keyval_create(copy_fn: Option<CopyAttrFn>, delete_fn: Option<DeleteAttrFn>, keyval_out: *mut c_int, extra_state: *mut c_void) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval_out, extra_state) }
    }

    fn Keyval_free(keyval_inout: *mut c_int) -> c_int {
        // SAFETY: forwarded (MPI-1's name).
        unsafe { PMPI_Comm_free_keyval(keyval_inout) }
    }

    fn Group_range_incl(group: c_int, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut c_int) -> c_int {
        // SAFETY: `n` triplets by contract.
        let ranks = tri!(expand_ranges("MPI_Group_range_incl", group, unsafe { c_array(ranges, n.max(0) as usize) }));
        // SAFETY: forwarded with the expanded ranks.
        unsafe { PMPI_Group_incl(group, ranks.len() as c_int, ranks.as_ptr(), newgroup) }
    }

    fn Group_range_excl(group: c_int, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut c_int) -> c_int {
        // SAFETY: `n` triplets by contract.
        let ranks = tri!(expand_ranges("MPI_Group_range_excl", group, unsafe { c_array(ranges, n.max(0) as usize) }));
        // SAFETY: forwarded with the expanded ranks.
        unsafe { PMPI_Group_excl(group, ranks.len() as c_int, ranks.as_ptr(), newgroup) }
    }
}

/// The ranks (first, last, stride) triplets name.
fn expand_ranges(
    call: &'static str,
    group: c_int,
    ranges: &[[c_int; 3]],
) -> Result<Vec<c_int>, c_int> {
    let g = group_arg(call, group)?;
    let mut out = Vec::new();
    for &[first, last, stride] in ranges {
        let bad = stride == 0
            || first < 0
            || last < 0
            || first as usize >= g.size()
            || last as usize >= g.size();
        if bad {
            let w = comm_for(call, MPI_COMM_WORLD)?;
            return Err(fail(
                &w,
                call,
                ErrorClass::Arg,
                format!(
                    "invalid range ({first}, {last}, {stride}) of a group of {}",
                    g.size()
                ),
            ));
        }
        let mut r = first;
        while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
            out.push(r);
            r += stride;
        }
    }
    Ok(out)
}
