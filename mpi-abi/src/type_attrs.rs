//! Attributes and names of datatypes. Datatype keyvals share the table of
//! communicator keyvals: their callbacks have the same C signature (the object
//! handle is an int either way).

use std::os::raw::{c_char, c_int, c_void};

use mpcrs::ErrorClass;

use crate::comm::{keyval, Keyval};
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

/// Runs the delete callbacks of every attribute of `t` (MPI_Type_free).
pub(crate) fn drop_attributes(t: MPI_Datatype) {
    let entries: Vec<(c_int, *mut c_void, Option<Keyval>)> = {
        let mut st = rank_state().expect("inside a rank");
        let keys: Vec<(MPI_Datatype, c_int)> = st
            .type_attrs
            .keys()
            .filter(|(h, _)| *h == t)
            .copied()
            .collect();
        keys.into_iter()
            .map(|key| {
                let v = st.type_attrs.remove(&key).expect("listed");
                (key.1, v, keyval(&st, key.1))
            })
            .collect()
    };
    for (k, v, kv) in entries {
        if let Some(Keyval {
            delete: Some(f),
            extra,
            ..
        }) = kv
        {
            // SAFETY: the program's own callback with its own values.
            unsafe { f(t, k, v, extra) };
        }
    }
}

/// Copies the attributes of `from` to its duplicate `to` (MPI_Type_dup).
pub(crate) fn copy_attributes(from: MPI_Datatype, to: MPI_Datatype) {
    let entries: Vec<(c_int, *mut c_void, Option<Keyval>)> = {
        let st = rank_state().expect("inside a rank");
        st.type_attrs
            .iter()
            .filter(|((h, _), _)| *h == from)
            .map(|(&(_, k), &v)| (k, v, keyval(&st, k)))
            .collect()
    };
    for (k, v, kv) in entries {
        let Some(Keyval {
            copy: Some(f),
            extra,
            ..
        }) = kv
        else {
            continue;
        };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag = 0;
        // SAFETY: the program's own callback; `out` receives the new value.
        let rc = unsafe {
            f(
                from,
                k,
                extra,
                v,
                (&mut out as *mut *mut c_void).cast(),
                &mut flag,
            )
        };
        if rc == MPI_SUCCESS && flag != 0 {
            rank_state()
                .expect("inside a rank")
                .type_attrs
                .insert((to, k), out);
        }
    }
}

mpi_fn! {
    fn Type_create_keyval(type_copy_attr_fn: Option<TypeCopyAttrFn>, type_delete_attr_fn: Option<TypeDeleteAttrFn>, type_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        // SAFETY: forwarded; the callback types are the communicator ones.
        unsafe { crate::comm::PMPI_Comm_create_keyval(type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state) }
    }

    fn Type_free_keyval(type_keyval: *mut c_int) -> c_int {
        // SAFETY: forwarded.
        unsafe { crate::comm::PMPI_Comm_free_keyval(type_keyval) }
    }

    fn Type_set_attr(datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let call = "MPI_Type_set_attr";
        tri!(type_arg(call, datatype));
        let (old, kv) = {
            let mut st = rank_state().expect("inside a rank");
            let Some(kv) = keyval(&st, type_keyval) else {
                drop(st);
                let w = tri!(comm_for(call, MPI_COMM_WORLD));
                return fail(&w, call, ErrorClass::Keyval, format!("invalid keyval {type_keyval:#x}"));
            };
            (st.type_attrs.insert((datatype, type_keyval), attribute_val), kv)
        };
        if let (Some(v), Keyval { delete: Some(f), extra, .. }) = (old, kv) {
            // SAFETY: the program's own callback on the value being replaced.
            unsafe { f(datatype, type_keyval, v, extra) };
        }
        MPI_SUCCESS
    }

    fn Type_get_attr(datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        tri!(type_arg("MPI_Type_get_attr", datatype));
        let v = rank_state().and_then(|st| st.type_attrs.get(&(datatype, type_keyval)).copied());
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
        let removed = rank_state().and_then(|mut st| st.type_attrs.remove(&(datatype, type_keyval)).map(|v| (v, keyval(&st, type_keyval))));
        match removed {
            Some((v, Some(Keyval { delete: Some(f), extra, .. }))) => {
                // SAFETY: the program's own callback.
                unsafe { f(datatype, type_keyval, v, extra) };
                MPI_SUCCESS
            }
            Some(_) => MPI_SUCCESS,
            None => {
                let w = tri!(comm_for(call, MPI_COMM_WORLD));
                fail(&w, call, ErrorClass::Keyval, format!("no attribute for keyval {type_keyval:#x}"))
            }
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
