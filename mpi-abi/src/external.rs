//! MPI_Pack_external and MPI_Unpack_external: the "external32" representation,
//! big-endian, each basic element byte-swapped in place of the native order.
//! Sizes are the native ones (as for every type of this LP64 ABI but `long`,
//! which external32 makes 4 bytes: programs that pack MPI_LONG this way get 8).

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

use mpcrs::ErrorClass;

use crate::datatype::{self, TypeInfo};
use crate::export::{mpi_fn, tri};
use crate::handles::*;

fn checked(call: &'static str, datarep: *const c_char, t: MPI_Datatype) -> Result<TypeInfo, c_int> {
    let fail_with = |class, detail: String| match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(&w, call, class, detail),
        Err(code) => code,
    };
    // SAFETY: a NUL-terminated string by contract.
    let rep = unsafe { CStr::from_ptr(datarep) }.to_string_lossy();
    if rep != "external32" {
        return Err(fail_with(
            ErrorClass::UnsupportedDatarep,
            format!("data representation {rep:?}"),
        ));
    }
    datatype::info(t)
        .ok_or_else(|| fail_with(ErrorClass::Type, format!("invalid datatype handle {t:#x}")))
}

/// Reverses the bytes of each basic element of `count` packed elements of `t`.
fn swap(data: &mut [u8], t: &TypeInfo) {
    let mut at = 0;
    while at < data.len() {
        for &(size, n) in t.basics.iter() {
            for _ in 0..n {
                if at + size > data.len() {
                    return;
                }
                data[at..at + size].reverse();
                at += size;
            }
        }
        if t.basics.is_empty() {
            return;
        }
    }
}

mpi_fn! {
    fn Pack_external_size(datarep: *const c_char, incount: c_int, datatype: MPI_Datatype, size: *mut MPI_Aint) -> c_int {
        let t = tri!(checked("MPI_Pack_external_size", datarep, datatype));
        // SAFETY: writable by contract.
        unsafe { *size = (incount.max(0) as usize * t.size) as MPI_Aint };
        MPI_SUCCESS
    }

    fn Pack_external(datarep: *const c_char, inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Aint, position: *mut MPI_Aint) -> c_int {
        let call = "MPI_Pack_external";
        let t = tri!(checked(call, datarep, datatype));
        let mut packed = Vec::new();
        // SAFETY: `inbuf` holds `incount` elements by contract.
        unsafe { datatype::pack(inbuf.cast(), incount.max(0) as usize, &t, &mut packed) };
        swap(&mut packed, &t);
        // SAFETY: readable by contract.
        let pos = unsafe { *position }.max(0) as usize;
        if pos + packed.len() > outsize.max(0) as usize {
            let w = tri!(comm_for(call, MPI_COMM_WORLD));
            return fail(&w, call, ErrorClass::Truncate, format!("{} bytes at position {pos} exceed the output buffer of {outsize}", packed.len()));
        }
        // SAFETY: checked to fit in the `outsize` bytes of `outbuf`.
        unsafe {
            std::ptr::copy_nonoverlapping(packed.as_ptr(), outbuf.cast::<u8>().add(pos), packed.len());
            *position = (pos + packed.len()) as MPI_Aint;
        }
        MPI_SUCCESS
    }

    fn Unpack_external(datarep: *const c_char, inbuf: *const c_void, insize: MPI_Aint, position: *mut MPI_Aint, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype) -> c_int {
        let call = "MPI_Unpack_external";
        let t = tri!(checked(call, datarep, datatype));
        let n = outcount.max(0) as usize;
        // SAFETY: readable by contract.
        let pos = unsafe { *position }.max(0) as usize;
        let need = n * t.size;
        if pos + need > insize.max(0) as usize {
            let w = tri!(comm_for(call, MPI_COMM_WORLD));
            return fail(&w, call, ErrorClass::Truncate, format!("{need} bytes at position {pos} exceed the input buffer of {insize}"));
        }
        // SAFETY: checked to lie within the `insize` bytes of `inbuf`.
        let mut data = unsafe { std::slice::from_raw_parts(inbuf.cast::<u8>().add(pos), need) }.to_vec();
        swap(&mut data, &t);
        // SAFETY: `outbuf` holds `outcount` elements by contract.
        unsafe {
            datatype::unpack(&data, outbuf.cast(), n, &t);
            *position = (pos + need) as MPI_Aint;
        }
        MPI_SUCCESS
    }
}
