//! Predefined datatypes: size and element kind of each MPICH handle value.

use std::os::raw::c_int;

use mpcrs::raw::Elements;
use mpcrs::Kind;

use crate::handles::MPI_Datatype;

/// Size in bytes and element kind of a predefined datatype handle of mpi.h;
/// `None` if the handle is not one.
pub(crate) fn lookup(t: MPI_Datatype) -> Option<Elements> {
    let (size, kind) = match t as u32 {
        0x4c00_0101 | 0x4c00_0118 | 0x4c00_0137 => (1, Kind::I8), // CHAR, SIGNED_CHAR, INT8_T
        0x4c00_0102 | 0x4c00_010d | 0x4c00_010f | 0x4c00_013b | 0x4c00_013f => (1, Kind::U8), // UNSIGNED_CHAR, BYTE, PACKED, UINT8_T, C_BOOL
        0x4c00_0203 | 0x4c00_0238 => (2, Kind::I16), // SHORT, INT16_T
        0x4c00_0204 | 0x4c00_023c => (2, Kind::U16), // UNSIGNED_SHORT, UINT16_T
        0x4c00_0405 | 0x4c00_0439 | 0x4c00_040e => (4, Kind::I32), // INT, INT32_T, WCHAR
        0x4c00_0406 | 0x4c00_043d => (4, Kind::U32), // UNSIGNED, UINT32_T
        0x4c00_0807 | 0x4c00_0809 | 0x4c00_083a => (8, Kind::I64), // LONG, LONG_LONG, INT64_T
        0x4c00_0843 | 0x4c00_0844 | 0x4c00_0845 => (8, Kind::I64), // AINT, OFFSET, COUNT
        0x4c00_0808 | 0x4c00_0819 | 0x4c00_083e => (8, Kind::U64), // UNSIGNED_LONG, UNSIGNED_LONG_LONG, UINT64_T
        0x4c00_040a => (4, Kind::F32),                             // FLOAT
        0x4c00_080b => (8, Kind::F64),                             // DOUBLE
        0x4c00_100c => (16, Kind::Opaque),                         // LONG_DOUBLE
        0x8c00_0000 => (8, Kind::PairF32I32),                      // FLOAT_INT
        0x8c00_0001 => (16, Kind::PairF64I32),                     // DOUBLE_INT
        0x8c00_0002 => (16, Kind::PairI64I32),                     // LONG_INT
        0x8c00_0003 => (8, Kind::PairI16I32),                      // SHORT_INT
        0x4c00_0816 => (8, Kind::PairI32I32),                      // 2INT
        0x8c00_0004 => (32, Kind::Opaque),                         // LONG_DOUBLE_INT
        _ => return None,
    };
    Some(Elements { kind, size })
}

/// Bytes of `count` elements of `t`, or the error class if either is invalid.
pub(crate) fn bytes(
    count: c_int,
    t: MPI_Datatype,
) -> Result<(usize, Elements), (mpcrs::ErrorClass, String)> {
    let Some(el) = lookup(t) else {
        return Err((
            mpcrs::ErrorClass::Type,
            format!("invalid datatype handle {t:#x}"),
        ));
    };
    if count < 0 {
        return Err((mpcrs::ErrorClass::Count, format!("negative count {count}")));
    }
    Ok((count as usize * el.size, el))
}
