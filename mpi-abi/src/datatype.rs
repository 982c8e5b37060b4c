//! Predefined datatypes: size and element kind of each MPICH handle value.

use std::os::raw::c_int;

use mpcrs::raw::Elements;
use mpcrs::Kind;

use crate::handles::MPI_Datatype;

/// (handle, size in bytes, kind) of every predefined datatype of mpi.h.
const PREDEFINED: &[(MPI_Datatype, usize, Kind)] = &[
    (0x4c00_0101, 1, Kind::I8),                    // MPI_CHAR
    (0x4c00_0118, 1, Kind::I8),                    // MPI_SIGNED_CHAR
    (0x4c00_0102, 1, Kind::U8),                    // MPI_UNSIGNED_CHAR
    (0x4c00_010d, 1, Kind::U8),                    // MPI_BYTE
    (0x4c00_040e, 4, Kind::I32),                   // MPI_WCHAR
    (0x4c00_0203, 2, Kind::I16),                   // MPI_SHORT
    (0x4c00_0204, 2, Kind::U16),                   // MPI_UNSIGNED_SHORT
    (0x4c00_0405, 4, Kind::I32),                   // MPI_INT
    (0x4c00_0406, 4, Kind::U32),                   // MPI_UNSIGNED
    (0x4c00_0807, 8, Kind::I64),                   // MPI_LONG
    (0x4c00_0808, 8, Kind::U64),                   // MPI_UNSIGNED_LONG
    (0x4c00_040a, 4, Kind::F32),                   // MPI_FLOAT
    (0x4c00_080b, 8, Kind::F64),                   // MPI_DOUBLE
    (0x4c00_100c, 16, Kind::Opaque),               // MPI_LONG_DOUBLE
    (0x4c00_0809, 8, Kind::I64),                   // MPI_LONG_LONG_INT
    (0x4c00_0819, 8, Kind::U64),                   // MPI_UNSIGNED_LONG_LONG
    (0x4c00_010f, 1, Kind::U8),                    // MPI_PACKED
    (0x4c00_0137, 1, Kind::I8),                    // MPI_INT8_T
    (0x4c00_0238, 2, Kind::I16),                   // MPI_INT16_T
    (0x4c00_0439, 4, Kind::I32),                   // MPI_INT32_T
    (0x4c00_083a, 8, Kind::I64),                   // MPI_INT64_T
    (0x4c00_013b, 1, Kind::U8),                    // MPI_UINT8_T
    (0x4c00_023c, 2, Kind::U16),                   // MPI_UINT16_T
    (0x4c00_043d, 4, Kind::U32),                   // MPI_UINT32_T
    (0x4c00_083e, 8, Kind::U64),                   // MPI_UINT64_T
    (0x4c00_013f, 1, Kind::U8),                    // MPI_C_BOOL
    (0x4c00_0843, 8, Kind::I64),                   // MPI_AINT
    (0x4c00_0844, 8, Kind::I64),                   // MPI_OFFSET
    (0x4c00_0845, 8, Kind::I64),                   // MPI_COUNT
    (0x8c00_0000u32 as i32, 8, Kind::PairF32I32),  // MPI_FLOAT_INT
    (0x8c00_0001u32 as i32, 16, Kind::PairF64I32), // MPI_DOUBLE_INT
    (0x8c00_0002u32 as i32, 16, Kind::PairI64I32), // MPI_LONG_INT
    (0x8c00_0003u32 as i32, 8, Kind::PairI16I32),  // MPI_SHORT_INT
    (0x4c00_0816, 8, Kind::PairI32I32),            // MPI_2INT
    (0x8c00_0004u32 as i32, 32, Kind::Opaque),     // MPI_LONG_DOUBLE_INT
];

/// Size and kind of a datatype handle; `None` if it is not a valid datatype.
pub(crate) fn lookup(t: MPI_Datatype) -> Option<Elements> {
    PREDEFINED
        .iter()
        .find(|d| d.0 == t)
        .map(|&(_, size, kind)| Elements { kind, size })
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
