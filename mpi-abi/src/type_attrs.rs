//! Attributes and names of datatypes (the attributes themselves are kept by
//! attributes.rs).

use std::os::raw::{c_char, c_int, c_void};

use mpcrs::ErrorClass;

use crate::attributes::{self, Kind};
use crate::ctypes::{TypeCopyAttrFn, TypeDeleteAttrFn};
use crate::datatype;
use crate::export::{mpi_fn, tri};
use crate::handles::*;

const MPI_MAX_OBJECT_NAME: usize = 128;

fn type_arg(call: &'static str, t: MPI_Datatype) -> Result<(), c_int> {
    if datatype::info(t).is_some() {
        return Ok(());
    }
    Err(match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(
            &w,
            call,
            ErrorClass::Type,
            format!("invalid datatype handle {t:#x}"),
        ),
        Err(code) => code,
    })
}

/// Deletes every attribute of `t` before MPI_Type_free frees it; the error
/// code if a delete callback failed (then `t` is not freed).
pub(crate) fn drop_attributes(t: MPI_Datatype) -> c_int {
    match attributes::delete_all(Kind::Type, t) {
        Ok(()) => MPI_SUCCESS,
        Err((class, detail)) => world_error("MPI_Type_free", class, detail),
    }
}

/// Copies the attributes of `from` to its new duplicate `*to` (MPI_Type_dup).
/// If a copy callback fails, the duplicate is freed, `*to` becomes
/// MPI_DATATYPE_NULL and the error code is returned.
///
/// # Safety
/// `to` is readable and writable.
pub(crate) unsafe fn copy_attributes(from: MPI_Datatype, to: *mut MPI_Datatype) -> c_int {
    // SAFETY: by contract.
    let h = unsafe { *to };
    match attributes::copy_all(Kind::Type, from, h) {
        Ok(()) => MPI_SUCCESS,
        Err((class, detail)) => {
            rank_state().expect("inside a rank").free_type(h);
            // SAFETY: by contract.
            unsafe { *to = 0x0c00_0000 }; // MPI_DATATYPE_NULL
            world_error("MPI_Type_dup", class, detail)
        }
    }
}

/// Raises an error of a datatype call on MPI_COMM_WORLD (a datatype has no
/// error handler of its own).
fn world_error(call: &'static str, class: ErrorClass, detail: String) -> c_int {
    match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(&w, call, class, detail),
        Err(code) => code,
    }
}

mpi_fn! {
    fn Type_create_keyval(type_copy_attr_fn: Option<TypeCopyAttrFn>, type_delete_attr_fn: Option<TypeDeleteAttrFn>, type_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        let _world = tri!(comm_for("MPI_Type_create_keyval", MPI_COMM_WORLD));
        // The callbacks have the communicator ones' C signature.
        let k = attributes::create_keyval(Kind::Type, type_copy_attr_fn, type_delete_attr_fn, extra_state);
        // SAFETY: writable by contract.
        unsafe { *type_keyval = k };
        MPI_SUCCESS
    }

    fn Type_free_keyval(type_keyval: *mut c_int) -> c_int {
        let call = "MPI_Type_free_keyval";
        // SAFETY: readable by contract.
        let k = unsafe { *type_keyval };
        if let Err((class, detail)) = attributes::free_keyval(Kind::Type, k) {
            return world_error(call, class, detail);
        }
        // SAFETY: writable by contract.
        unsafe { *type_keyval = attributes::KEYVAL_INVALID };
        MPI_SUCCESS
    }

    fn Type_set_attr(datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let call = "MPI_Type_set_attr";
        tri!(type_arg(call, datatype));
        match attributes::set(Kind::Type, datatype, type_keyval, attribute_val) {
            Ok(()) => MPI_SUCCESS,
            Err((class, detail)) => world_error(call, class, detail),
        }
    }

    fn Type_get_attr(datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        let call = "MPI_Type_get_attr";
        tri!(type_arg(call, datatype));
        let v = match attributes::get(Kind::Type, datatype, type_keyval) {
            Ok(v) => v,
            Err((class, detail)) => return world_error(call, class, detail),
        };
        // SAFETY: `attribute_val` is a `void **` and `flag` writable, per MPI.
        unsafe {
            *flag = v.is_some() as c_int;
            if let Some(v) = v {
                *(attribute_val as *mut *mut c_void) = v;
            }
        }
        MPI_SUCCESS
    }

    fn Type_delete_attr(datatype: MPI_Datatype, type_keyval: c_int) -> c_int {
        let call = "MPI_Type_delete_attr";
        tri!(type_arg(call, datatype));
        match attributes::delete(Kind::Type, datatype, type_keyval) {
            Ok(()) => MPI_SUCCESS,
            Err((class, detail)) => world_error(call, class, detail),
        }
    }

    fn Type_set_name(datatype: MPI_Datatype, type_name: *const c_char) -> c_int {
        tri!(type_arg("MPI_Type_set_name", datatype));
        // SAFETY: a NUL-terminated string by contract.
        let n = unsafe { std::ffi::CStr::from_ptr(type_name) }.to_string_lossy().into_owned();
        rank_state().expect("inside a rank").type_names.insert(datatype, n);
        MPI_SUCCESS
    }

    fn Type_get_name(datatype: MPI_Datatype, type_name: *mut c_char, resultlen: *mut c_int) -> c_int {
        tri!(type_arg("MPI_Type_get_name", datatype));
        let set = rank_state().and_then(|st| st.type_names.get(&datatype).cloned());
        let n = set.unwrap_or_else(|| datatype::predefined_name(datatype).unwrap_or("").to_string());
        // SAFETY: MPI specifies a buffer of MPI_MAX_OBJECT_NAME bytes.
        unsafe { crate::env::write_cstr(&n, type_name, MPI_MAX_OBJECT_NAME, resultlen) };
        MPI_SUCCESS
    }
}
