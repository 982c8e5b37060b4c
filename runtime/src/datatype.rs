//! Element types that can travel in messages and be reduced.

/// A number inside a (value, index) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Num {
    I16,
    I32,
    I64,
    F32,
    F64,
    /// C's `long double` (x87 extended precision in 16 bytes).
    F80,
}

impl Num {
    /// Bytes in memory (and alignment).
    pub fn size(self) -> usize {
        match self {
            Num::I16 => 2,
            Num::I32 | Num::F32 => 4,
            Num::I64 | Num::F64 => 8,
            Num::F80 => 16,
        }
    }

    /// Bytes that carry the value (a long double's padding is not data).
    pub fn data_size(self) -> usize {
        match self {
            Num::F80 => crate::x87::SIGNIFICANT,
            n => n.size(),
        }
    }
}

/// What the runtime knows of an element type: enough to apply built-in
/// reductions, and which of them MPI defines on it (MPI-4.0 §6.9.2's type groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Integers (C, Fortran, and MPI_AINT/MPI_OFFSET/MPI_COUNT).
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    /// Floating point.
    F32,
    F64,
    /// C's `long double` on x86-64: x87 extended precision in 16 bytes.
    F80,
    /// Complex numbers: (real, imaginary) of F32, F64 or F80.
    C32,
    C64,
    C80,
    /// Logical: C's `_Bool` and C++'s `bool` (1 byte), Fortran's LOGICAL (4).
    Bool,
    Logical,
    /// MPI_BYTE: bits without arithmetic, for the bitwise operations.
    Byte,
    /// (value, index) pairs for MINLOC/MAXLOC. `packed`: the index follows the
    /// value with no padding (how the library holds MPI_DOUBLE_INT and friends
    /// in flight); otherwise C's struct layout, as [`ValueIndex`].
    Pair {
        value: Num,
        index: Num,
        packed: bool,
    },
    /// Plain bytes with no arithmetic meaning: movable, reducible by user ops only.
    Opaque,
}

impl Kind {
    /// Where a pair's index lies and the bytes from one pair to the next.
    pub fn pair_layout(value: Num, index: Num, packed: bool) -> (usize, usize) {
        if packed {
            return (value.size(), value.size() + index.size());
        }
        let at = value.size().next_multiple_of(index.size());
        (
            at,
            (at + index.size()).next_multiple_of(value.size().max(index.size())),
        )
    }
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

/// The kind of `ValueIndex<T>` for the value number `value`.
const fn pair(value: Num) -> Kind {
    Kind::Pair {
        value,
        index: Num::I32,
        packed: false,
    }
}

// SAFETY: `repr(C)` with an f32 and an i32: 8 bytes, no padding, any bits valid.
unsafe impl Equivalence for ValueIndex<f32> {
    const KIND: Kind = pair(Num::F32);
}
// SAFETY: the trailing padding of (f64, i32) is never interpreted: reductions read
// `value` and `index` only, and any bit pattern is a valid f64/i32.
unsafe impl Equivalence for ValueIndex<f64> {
    const KIND: Kind = pair(Num::F64);
}
// SAFETY: as for `ValueIndex<f64>`.
unsafe impl Equivalence for ValueIndex<i64> {
    const KIND: Kind = pair(Num::I64);
}
// SAFETY: two i32: no padding, any bits valid.
unsafe impl Equivalence for ValueIndex<i32> {
    const KIND: Kind = pair(Num::I32);
}
// SAFETY: i16 + 2 padding bytes + i32; padding is never interpreted.
unsafe impl Equivalence for ValueIndex<i16> {
    const KIND: Kind = pair(Num::I16);
}

/// Size in bytes of one element of `kind` (opaque bytes: 1).
pub fn kind_size(kind: Kind) -> usize {
    match kind {
        Kind::I8 | Kind::U8 | Kind::Bool | Kind::Byte | Kind::Opaque => 1,
        Kind::I16 | Kind::U16 => 2,
        Kind::I32 | Kind::U32 | Kind::F32 | Kind::Logical => 4,
        Kind::I64 | Kind::U64 | Kind::F64 | Kind::C32 => 8,
        Kind::F80 | Kind::C64 => 16,
        Kind::C80 => 32,
        Kind::Pair {
            value,
            index,
            packed,
        } => Kind::pair_layout(value, index, packed).1,
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
