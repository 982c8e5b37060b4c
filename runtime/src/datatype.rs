//! Element types that can travel in messages and be reduced.

/// What the runtime knows of an element type: enough to apply built-in reductions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    /// (value, index) pairs for MINLOC/MAXLOC, as MPI_FLOAT_INT and friends.
    PairF32I32,
    PairF64I32,
    PairI64I32,
    PairI32I32,
    PairI16I32,
    /// Plain bytes with no arithmetic meaning: movable, reducible by user ops only.
    Opaque,
}

/// A plain-data element type whose bytes can be copied between ranks.
///
/// # Safety
/// Implementors must be `Copy`, contain no pointers or padding whose bytes are
/// meaningful, and accept every bit pattern (any bytes received form a valid value).
/// `KIND` must describe the layout exactly.
pub unsafe trait Equivalence: Copy + Send + Sync + 'static {
    const KIND: Kind;
}

macro_rules! equivalence {
    ($($t:ty => $k:ident),* $(,)?) => {
        $(
            // SAFETY: primitive numeric types accept every bit pattern and have no padding.
            unsafe impl Equivalence for $t { const KIND: Kind = Kind::$k; }
        )*
    };
}

equivalence!(
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f32 => F32, f64 => F64,
);

#[cfg(target_pointer_width = "64")]
equivalence!(isize => I64, usize => U64);

// SAFETY: an array of plain data is plain data with the element's kind, element-wise.
unsafe impl<T: Equivalence, const N: usize> Equivalence for [T; N] {
    const KIND: Kind = T::KIND;
}

/// A (value, index) pair for [`crate::Op::MaxLoc`] and [`crate::Op::MinLoc`], laid
/// out like C's `struct { T value; int index; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ValueIndex<T> {
    pub value: T,
    pub index: i32,
}

// SAFETY: `repr(C)` with an f32 and an i32: 8 bytes, no padding, any bits valid.
unsafe impl Equivalence for ValueIndex<f32> {
    const KIND: Kind = Kind::PairF32I32;
}
// SAFETY: the trailing padding of (f64, i32) is never interpreted: reductions read
// `value` and `index` only, and any bit pattern is a valid f64/i32.
unsafe impl Equivalence for ValueIndex<f64> {
    const KIND: Kind = Kind::PairF64I32;
}
// SAFETY: as for `ValueIndex<f64>`.
unsafe impl Equivalence for ValueIndex<i64> {
    const KIND: Kind = Kind::PairI64I32;
}
// SAFETY: two i32: no padding, any bits valid.
unsafe impl Equivalence for ValueIndex<i32> {
    const KIND: Kind = Kind::PairI32I32;
}
// SAFETY: i16 + 2 padding bytes + i32; padding is never interpreted.
unsafe impl Equivalence for ValueIndex<i16> {
    const KIND: Kind = Kind::PairI16I32;
}

/// Size in bytes of one element of `kind` (`None` for opaque bytes: 1).
pub fn kind_size(kind: Kind) -> usize {
    match kind {
        Kind::I8 | Kind::U8 | Kind::Opaque => 1,
        Kind::I16 | Kind::U16 => 2,
        Kind::I32 | Kind::U32 | Kind::F32 => 4,
        Kind::I64 | Kind::U64 | Kind::F64 => 8,
        Kind::PairF32I32 | Kind::PairI32I32 | Kind::PairI16I32 => 8,
        Kind::PairF64I32 | Kind::PairI64I32 => 16,
    }
}

/// The bytes of a slice of elements.
pub fn bytes_of<T: Equivalence>(s: &[T]) -> &[u8] {
    // SAFETY: `T: Equivalence` is plain data; the byte view covers exactly the slice.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of elements.
pub fn bytes_of_mut<T: Equivalence>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as `bytes_of`; every byte pattern written is a valid `T` (trait contract).
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}
