//! MPI_Pack_external and MPI_Unpack_external: the "external32" representation
//! (MPI-4.0 §14.5.2): big-endian, IEEE formats, and the sizes of its table —
//! `long` and `unsigned long` in 4 bytes, `wchar_t` in 2, `long double` as
//! IEEE binary128 — converted basic element by basic element.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

use mpcrs::ErrorClass;

use mpcrs::Kind;

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

/// How a basic element is written in external32.
#[derive(Clone, Copy)]
enum Conv {
    /// Byte-reversed in units of the given size (complex: each part).
    Swap(usize),
    /// An integer narrowed to the external size; widened back with or
    /// without its sign.
    Int { signed: bool },
    /// x87 extended precision (16 bytes in memory) as IEEE binary128, per
    /// 16-byte unit (a complex has two).
    LongDouble,
}

/// External size and conversion of the basic element `t`.
fn external(t: MPI_Datatype) -> (usize, Conv) {
    let native = datatype::basic_size(t);
    match t as u32 {
        0x4c00_0807 => (4, Conv::Int { signed: true }), // MPI_LONG
        0x4c00_0808 => (4, Conv::Int { signed: false }), // MPI_UNSIGNED_LONG
        0x4c00_040e => (2, Conv::Int { signed: false }), // MPI_WCHAR
        // MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX
        0x4c00_100c | 0x4c00_2042 | 0x4c00_2036 => (native, Conv::LongDouble),
        _ => match datatype::predefined(t).map(|el| el.kind) {
            Some(Kind::C32 | Kind::C64) => (native, Conv::Swap(native / 2)),
            _ => (native, Conv::Swap(native.max(1))),
        },
    }
}

/// External bytes of one element of `t`.
pub(crate) fn external_size(t: &TypeInfo) -> usize {
    t.basics.iter().map(|&(b, n)| external(b).0 * n).sum()
}

/// An x87 value (little-endian, 16 bytes) as big-endian IEEE binary128. The
/// exponents share their bias; the explicit integer bit is dropped.
fn x87_to_binary128(v: &[u8], out: &mut [u8]) {
    let mant = u64::from_le_bytes(v[..8].try_into().expect("8 bytes"));
    let se = u16::from_le_bytes([v[8], v[9]]) as u128;
    let frac = ((mant & !(1 << 63)) as u128) << 49;
    out[..16].copy_from_slice(&((se << 112) | frac).to_be_bytes());
}

/// The inverse of [`x87_to_binary128`]; the 49 lowest fraction bits, beyond
/// x87's precision, are dropped.
fn binary128_to_x87(v: &[u8], out: &mut [u8]) {
    let bits = u128::from_be_bytes(v[..16].try_into().expect("16 bytes"));
    let se = (bits >> 112) as u16;
    let integer = if se & 0x7fff != 0 { 1 << 63 } else { 0 };
    let mant = ((bits >> 49) as u64 & !(1 << 63)) | integer;
    out[..8].copy_from_slice(&mant.to_le_bytes());
    out[8..10].copy_from_slice(&se.to_le_bytes());
    out[10..16].fill(0);
}

/// Which way [`convert`] goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    ToExternal,
    FromExternal,
}

/// Native packed elements of `t` to external32.
pub(crate) fn to_external(native: &[u8], t: &TypeInfo, count: usize) -> Vec<u8> {
    convert(native, t, count, Direction::ToExternal)
}

/// External32 elements of `t` back to native packed bytes.
pub(crate) fn from_external(ext_data: &[u8], t: &TypeInfo, count: usize) -> Vec<u8> {
    convert(ext_data, t, count, Direction::FromExternal)
}

/// Converts `count` elements of `t` between native packed bytes and
/// external32, basic value by basic value.
fn convert(data: &[u8], t: &TypeInfo, count: usize, dir: Direction) -> Vec<u8> {
    let to = dir == Direction::ToExternal;
    let mut out = Vec::with_capacity(count * if to { external_size(t) } else { t.size });
    let mut at = 0;
    for _ in 0..count {
        for &(b, n) in t.basics.iter() {
            let size = datatype::basic_size(b);
            let (ext, conv) = external(b);
            let (read, written) = if to { (size, ext) } else { (ext, size) };
            for _ in 0..n {
                let v = &data[at..at + read];
                let start = out.len();
                match conv {
                    Conv::Swap(unit) => {
                        out.extend_from_slice(v);
                        out[start..].chunks_mut(unit).for_each(|c| c.reverse());
                    }
                    // Little-endian: the low bytes come first.
                    Conv::Int { .. } if to => out.extend(v[..ext].iter().rev()),
                    Conv::Int { signed } => {
                        let negative = signed && v[0] & 0x80 != 0;
                        out.extend(v.iter().rev());
                        out.resize(start + size, if negative { 0xff } else { 0 });
                    }
                    Conv::LongDouble => {
                        out.resize(start + written, 0);
                        let f = if to {
                            x87_to_binary128
                        } else {
                            binary128_to_x87
                        };
                        for (x, y) in v.chunks(16).zip(out[start..].chunks_mut(16)) {
                            f(x, y);
                        }
                    }
                }
                at += read;
            }
        }
    }
    out
}

mpi_fn! {
    fn Pack_external_size(datarep: *const c_char, incount: c_int, datatype: MPI_Datatype, size: *mut MPI_Aint) -> c_int {
        let t = tri!(checked("MPI_Pack_external_size", datarep, datatype));
        // SAFETY: writable by contract.
        unsafe { *size = (incount.max(0) as usize * external_size(&t)) as MPI_Aint };
        MPI_SUCCESS
    }

    fn Pack_external(datarep: *const c_char, inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Aint, position: *mut MPI_Aint) -> c_int {
        let call = "MPI_Pack_external";
        let t = tri!(checked(call, datarep, datatype));
        let n = incount.max(0) as usize;
        let mut packed = Vec::new();
        // SAFETY: `inbuf` holds `incount` elements by contract.
        unsafe { datatype::pack(inbuf.cast(), n, &t, &mut packed) };
        let packed = to_external(&packed, &t, n);
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
        let need = n * external_size(&t);
        if pos + need > insize.max(0) as usize {
            let w = tri!(comm_for(call, MPI_COMM_WORLD));
            return fail(&w, call, ErrorClass::Truncate, format!("{need} bytes at position {pos} exceed the input buffer of {insize}"));
        }
        // SAFETY: checked to lie within the `insize` bytes of `inbuf`.
        let ext = unsafe { std::slice::from_raw_parts(inbuf.cast::<u8>().add(pos), need) };
        let data = from_external(ext, &t, n);
        // SAFETY: `outbuf` holds `outcount` elements by contract.
        unsafe {
            datatype::unpack(&data, outbuf.cast(), n, &t);
            *position = (pos + need) as MPI_Aint;
        }
        MPI_SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_double_round_trips_through_binary128() {
        // 1.5 as x87: integer bit and the first fraction bit, exponent 0x3fff.
        let mut x = [0u8; 16];
        x[..8].copy_from_slice(&(3u64 << 62).to_le_bytes());
        x[8..10].copy_from_slice(&0xbfffu16.to_le_bytes()); // negative
        let mut q = [0u8; 16];
        x87_to_binary128(&x, &mut q);
        assert_eq!(&q[..3], &[0xbf, 0xff, 0x80]);
        assert!(q[3..].iter().all(|&b| b == 0));
        let mut back = [0xaau8; 16];
        binary128_to_x87(&q, &mut back);
        assert_eq!(back, x);
    }
}
