//! Reduction operations: the built-in ones on every basic kind, and user functions.

use std::sync::Arc;

use std::cmp::Ordering;

use crate::datatype::{kind_size, Equivalence, Kind, Num};
use crate::error::ErrorClass;
use crate::x87;

/// A user reduction on raw bytes: `inout = input op inout`, element-wise, where both
/// slices hold the same number of whole elements.
pub type UserFn = dyn Fn(&[u8], &mut [u8]) + Send + Sync;

/// An MPI reduction operation.
#[derive(Clone)]
pub enum Op {
    Max,
    Min,
    Sum,
    Prod,
    LogicalAnd,
    BitAnd,
    LogicalOr,
    BitOr,
    LogicalXor,
    BitXor,
    MinLoc,
    MaxLoc,
    /// MPI_REPLACE (one-sided only in MPI; usable as "last operand wins").
    Replace,
    /// MPI_NO_OP: keeps the target value.
    NoOp,
    User {
        func: Arc<UserFn>,
        commutative: bool,
    },
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::User { commutative, .. } => write!(f, "Op::User(commutative: {commutative})"),
            other => write!(f, "Op::{}", other.name()),
        }
    }
}

impl Op {
    /// A user operation on typed elements: `f(input, inout)` sets `inout[i] =
    /// input[i] op inout[i]`.
    pub fn user<T: Equivalence>(
        commutative: bool,
        f: impl Fn(&[T], &mut [T]) + Send + Sync + 'static,
    ) -> Op {
        let func = move |input: &[u8], inout: &mut [u8]| {
            let n = inout.len() / std::mem::size_of::<T>();
            // SAFETY: the runtime passes buffers of whole `T` elements that came from
            // `T` slices (aligned allocations of the caller or of the runtime's scratch,
            // which is 16-byte aligned); `T: Equivalence` accepts any bits.
            let (a, b) = unsafe {
                (
                    std::slice::from_raw_parts(input.as_ptr().cast::<T>(), n),
                    std::slice::from_raw_parts_mut(inout.as_mut_ptr().cast::<T>(), n),
                )
            };
            f(a, b)
        };
        Op::User {
            func: Arc::new(func),
            commutative,
        }
    }

    /// A user operation on raw bytes.
    pub fn user_bytes(commutative: bool, f: Arc<UserFn>) -> Op {
        Op::User {
            func: f,
            commutative,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Op::Max => "MPI_MAX",
            Op::Min => "MPI_MIN",
            Op::Sum => "MPI_SUM",
            Op::Prod => "MPI_PROD",
            Op::LogicalAnd => "MPI_LAND",
            Op::BitAnd => "MPI_BAND",
            Op::LogicalOr => "MPI_LOR",
            Op::BitOr => "MPI_BOR",
            Op::LogicalXor => "MPI_LXOR",
            Op::BitXor => "MPI_BXOR",
            Op::MinLoc => "MPI_MINLOC",
            Op::MaxLoc => "MPI_MAXLOC",
            Op::Replace => "MPI_REPLACE",
            Op::NoOp => "MPI_NO_OP",
            Op::User { .. } => "user-defined op",
        }
    }

    pub fn is_commutative(&self) -> bool {
        match self {
            Op::User { commutative, .. } => *commutative,
            Op::Replace | Op::NoOp => false,
            _ => true,
        }
    }

    /// Checks that the op applies to `kind`; the class to report if not.
    pub fn check(&self, kind: Kind) -> Result<(), (ErrorClass, String)> {
        if apply_kind_ok(self, kind) {
            Ok(())
        } else {
            Err((
                ErrorClass::Op,
                format!(
                    "{} is not defined on elements of kind {kind:?}",
                    self.name()
                ),
            ))
        }
    }

    /// `inout = input op inout`, element-wise. Both slices hold whole elements of
    /// `kind` and have the same length; `check` has accepted the pair.
    pub fn apply(&self, kind: Kind, input: &[u8], inout: &mut [u8]) {
        debug_assert_eq!(input.len(), inout.len());
        debug_assert_eq!(inout.len() % kind_size(kind), 0);
        match self {
            Op::User { func, .. } => func(input, inout),
            Op::NoOp => {}
            Op::Replace => inout.copy_from_slice(input),
            _ => apply_builtin(self, kind, input, inout),
        }
    }
}

/// Whether MPI defines `op` on elements of `kind`: MPI-4.0 §6.9.2's pairs of
/// operation and type group, with MPICH's extensions (logical operations on
/// floating point, MPI_CHAR and MPI_CHARACTER as integers) so that programs
/// written against MPICH keep working.
fn apply_kind_ok(op: &Op, kind: Kind) -> bool {
    use Kind::*;
    let integer = matches!(kind, I8 | U8 | I16 | U16 | I32 | U32 | I64 | U64);
    let float = matches!(kind, F32 | F64) || (kind == F80 && x87::SUPPORTED);
    let complex = matches!(kind, C32 | C64) || (kind == C80 && x87::SUPPORTED);
    let logical = matches!(kind, Bool | Logical);
    match op {
        Op::User { .. } | Op::Replace | Op::NoOp => true,
        Op::Max | Op::Min => integer || float,
        Op::Sum | Op::Prod => integer || float || complex,
        Op::LogicalAnd | Op::LogicalOr | Op::LogicalXor => integer || logical || float,
        Op::BitAnd | Op::BitOr | Op::BitXor => integer || kind == Byte,
        Op::MinLoc | Op::MaxLoc => matches!(
            kind,
            Pair { value, index, .. } if x87::SUPPORTED || (value != Num::F80 && index != Num::F80)
        ),
    }
}

/// Reinterprets byte slices as element slices; the caller guarantees alignment
/// (runtime buffers come from typed slices or 16-byte aligned scratch) — if a
/// caller's buffer is unaligned the copy path below is taken instead.
fn typed<'a, T: Copy>(input: &'a [u8], inout: &'a mut [u8]) -> Option<(&'a [T], &'a mut [T])> {
    let align = std::mem::align_of::<T>();
    if !(input.as_ptr() as usize).is_multiple_of(align)
        || !(inout.as_ptr() as usize).is_multiple_of(align)
    {
        return None;
    }
    let n = inout.len() / std::mem::size_of::<T>();
    // SAFETY: alignment checked above; lengths are whole elements; T is plain data.
    unsafe {
        Some((
            std::slice::from_raw_parts(input.as_ptr().cast::<T>(), n),
            std::slice::from_raw_parts_mut(inout.as_mut_ptr().cast::<T>(), n),
        ))
    }
}

fn with_typed<T: Copy>(input: &[u8], inout: &mut [u8], f: impl Fn(&[T], &mut [T])) {
    if let Some((a, b)) = typed::<T>(input, inout) {
        f(a, b);
        return;
    }
    // Unaligned user buffers (legal in C): reduce through aligned copies.
    let n = inout.len() / std::mem::size_of::<T>();
    let mut a: Vec<T> = Vec::with_capacity(n);
    let mut b: Vec<T> = Vec::with_capacity(n);
    // SAFETY: both vectors have capacity for n elements; we fill all n from bytes of
    // whole elements, and T is plain data that accepts any bits.
    unsafe {
        std::ptr::copy_nonoverlapping(input.as_ptr(), a.as_mut_ptr().cast::<u8>(), inout.len());
        std::ptr::copy_nonoverlapping(inout.as_ptr(), b.as_mut_ptr().cast::<u8>(), inout.len());
        a.set_len(n);
        b.set_len(n);
    }
    f(&a, &mut b);
    // SAFETY: `b` holds exactly inout.len() bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(b.as_ptr().cast::<u8>(), inout.as_mut_ptr(), inout.len())
    };
}

macro_rules! arith {
    ($op:expr, $t:ty, $input:expr, $inout:expr, int) => {
        with_typed::<$t>($input, $inout, |a, b| match $op {
            Op::Sum => b
                .iter_mut()
                .zip(a)
                .for_each(|(y, x)| *y = x.wrapping_add(*y)),
            Op::Prod => b
                .iter_mut()
                .zip(a)
                .for_each(|(y, x)| *y = x.wrapping_mul(*y)),
            Op::Max => b.iter_mut().zip(a).for_each(|(y, x)| *y = (*x).max(*y)),
            Op::Min => b.iter_mut().zip(a).for_each(|(y, x)| *y = (*x).min(*y)),
            Op::LogicalAnd => b
                .iter_mut()
                .zip(a)
                .for_each(|(y, x)| *y = ((*x != 0) && (*y != 0)) as $t),
            Op::LogicalOr => b
                .iter_mut()
                .zip(a)
                .for_each(|(y, x)| *y = ((*x != 0) || (*y != 0)) as $t),
            Op::LogicalXor => b
                .iter_mut()
                .zip(a)
                .for_each(|(y, x)| *y = ((*x != 0) != (*y != 0)) as $t),
            Op::BitAnd => b.iter_mut().zip(a).for_each(|(y, x)| *y &= *x),
            Op::BitOr => b.iter_mut().zip(a).for_each(|(y, x)| *y |= *x),
            Op::BitXor => b.iter_mut().zip(a).for_each(|(y, x)| *y ^= *x),
            _ => unreachable!("op checked before apply"),
        })
    };
    ($op:expr, $t:ty, $input:expr, $inout:expr, float) => {
        with_typed::<$t>($input, $inout, |a, b| match $op {
            Op::Sum => b.iter_mut().zip(a).for_each(|(y, x)| *y += *x),
            Op::Prod => b.iter_mut().zip(a).for_each(|(y, x)| *y *= *x),
            Op::Max => b.iter_mut().zip(a).for_each(|(y, x)| *y = x.max(*y)),
            Op::Min => b.iter_mut().zip(a).for_each(|(y, x)| *y = x.min(*y)),
            Op::LogicalAnd => b
                .iter_mut()
                .zip(a)
                .for_each(|(y, x)| *y = ((*x != 0.0) && (*y != 0.0)) as i32 as $t),
            Op::LogicalOr => b
                .iter_mut()
                .zip(a)
                .for_each(|(y, x)| *y = ((*x != 0.0) || (*y != 0.0)) as i32 as $t),
            Op::LogicalXor => b
                .iter_mut()
                .zip(a)
                .for_each(|(y, x)| *y = ((*x != 0.0) != (*y != 0.0)) as i32 as $t),
            _ => unreachable!("op checked before apply"),
        })
    };
}

/// Complex numbers as (re, im) pairs of `$t`: only SUM and PROD are defined.
macro_rules! complex {
    ($op:expr, $t:ty, $input:expr, $inout:expr) => {
        with_typed::<[$t; 2]>($input, $inout, |a, b| match $op {
            Op::Sum => b.iter_mut().zip(a).for_each(|(y, x)| {
                y[0] += x[0];
                y[1] += x[1];
            }),
            Op::Prod => b.iter_mut().zip(a).for_each(|(y, x)| {
                *y = [x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]];
            }),
            _ => unreachable!("op checked before apply"),
        })
    };
}

/// `long double`, element by element on the FPU.
fn long_double(op: &Op, input: &[u8], inout: &mut [u8]) {
    for (x, y) in input.chunks_exact(16).zip(inout.chunks_exact_mut(16)) {
        match op {
            Op::Sum => x87::add(x, y),
            Op::Prod => x87::mul(x, y),
            Op::Max if x87::gt(x, y) => y.copy_from_slice(x),
            Op::Min if x87::gt(y, x) => y.copy_from_slice(x),
            Op::Max | Op::Min => {}
            Op::LogicalAnd => x87::set_bool(y, !x87::is_zero(x) && !x87::is_zero(y)),
            Op::LogicalOr => x87::set_bool(y, !x87::is_zero(x) || !x87::is_zero(y)),
            Op::LogicalXor => x87::set_bool(y, x87::is_zero(x) != x87::is_zero(y)),
            _ => unreachable!("op checked before apply"),
        }
    }
}

/// `long double _Complex`: (re, im), 16 bytes each.
fn long_double_complex(op: &Op, input: &[u8], inout: &mut [u8]) {
    for (x, y) in input.chunks_exact(32).zip(inout.chunks_exact_mut(32)) {
        match op {
            Op::Sum => {
                x87::add(&x[..16], &mut y[..16]);
                x87::add(&x[16..], &mut y[16..]);
            }
            Op::Prod => x87::complex_mul(x, y),
            _ => unreachable!("op checked before apply"),
        }
    }
}

/// Orders two numbers of kind `n` at the start of `a` and `b` (any alignment);
/// `None` when either is a NaN.
fn compare(n: Num, a: &[u8], b: &[u8]) -> Option<Ordering> {
    fn read<const N: usize>(v: &[u8]) -> [u8; N] {
        v[..N].try_into().expect("N bytes")
    }
    match n {
        Num::I16 => Some(i16::from_ne_bytes(read(a)).cmp(&i16::from_ne_bytes(read(b)))),
        Num::I32 => Some(i32::from_ne_bytes(read(a)).cmp(&i32::from_ne_bytes(read(b)))),
        Num::I64 => Some(i64::from_ne_bytes(read(a)).cmp(&i64::from_ne_bytes(read(b)))),
        Num::F32 => f32::from_ne_bytes(read(a)).partial_cmp(&f32::from_ne_bytes(read(b))),
        Num::F64 => f64::from_ne_bytes(read(a)).partial_cmp(&f64::from_ne_bytes(read(b))),
        Num::F80 => {
            if x87::is_nan(a) || x87::is_nan(b) {
                None
            } else if x87::gt(a, b) {
                Some(Ordering::Greater)
            } else if x87::gt(b, a) {
                Some(Ordering::Less)
            } else {
                Some(Ordering::Equal)
            }
        }
    }
}

/// MINLOC and MAXLOC on (value, index) pairs laid out as `Kind::pair_layout` says.
fn loc(op: &Op, value: Num, index: Num, packed: bool, input: &[u8], inout: &mut [u8]) {
    let (at, stride) = Kind::pair_layout(value, index, packed);
    for (x, y) in input
        .chunks_exact(stride)
        .zip(inout.chunks_exact_mut(stride))
    {
        let order = compare(value, x, y);
        let better = match op {
            Op::MinLoc => order == Some(Ordering::Less),
            _ => order == Some(Ordering::Greater),
        };
        // Ties keep the smaller index, as MPI specifies.
        let tie = order == Some(Ordering::Equal)
            && compare(index, &x[at..], &y[at..]) == Some(Ordering::Less);
        if better || tie {
            y.copy_from_slice(x);
        }
    }
}

fn apply_builtin(op: &Op, kind: Kind, input: &[u8], inout: &mut [u8]) {
    match kind {
        Kind::I8 => arith!(op, i8, input, inout, int),
        // MPI_BYTE and the 1-byte booleans: `check` admits only the bitwise,
        // respectively logical, operations, which work as on unsigned bytes.
        Kind::U8 | Kind::Byte | Kind::Bool => arith!(op, u8, input, inout, int),
        Kind::I16 => arith!(op, i16, input, inout, int),
        Kind::U16 => arith!(op, u16, input, inout, int),
        Kind::I32 | Kind::Logical => arith!(op, i32, input, inout, int),
        Kind::U32 => arith!(op, u32, input, inout, int),
        Kind::I64 => arith!(op, i64, input, inout, int),
        Kind::U64 => arith!(op, u64, input, inout, int),
        Kind::F32 => arith!(op, f32, input, inout, float),
        Kind::F64 => arith!(op, f64, input, inout, float),
        Kind::F80 => long_double(op, input, inout),
        Kind::C32 => complex!(op, f32, input, inout),
        Kind::C64 => complex!(op, f64, input, inout),
        Kind::C80 => long_double_complex(op, input, inout),
        Kind::Pair {
            value,
            index,
            packed,
        } => loc(op, value, index, packed, input, inout),
        Kind::Opaque => unreachable!("no built-in op is defined on opaque bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{bytes_of, bytes_of_mut, ValueIndex};

    fn reduce<T: Equivalence>(op: &Op, input: &[T], inout: &mut [T]) {
        op.check(T::KIND).unwrap();
        op.apply(T::KIND, bytes_of(input), bytes_of_mut(inout));
    }

    #[test]
    fn builtin_ops_on_every_kind() {
        let mut i = [5i32, -3, 7];
        reduce(&Op::Sum, &[1, 2, 3], &mut i);
        assert_eq!(i, [6, -1, 10]);
        let mut u = [0b1100u8];
        reduce(&Op::BitXor, &[0b1010u8], &mut u);
        assert_eq!(u, [0b0110]);
        let mut f = [1.5f64, -2.0];
        reduce(&Op::Max, &[0.5, 3.0], &mut f);
        assert_eq!(f, [1.5, 3.0]);
        let mut l = [0i64, 4];
        reduce(&Op::LogicalOr, &[0, 0], &mut l);
        assert_eq!(l, [0, 1]);
        let mut p = [
            ValueIndex {
                value: 2.0f64,
                index: 3,
            },
            ValueIndex {
                value: 1.0,
                index: 0,
            },
        ];
        reduce(
            &Op::MinLoc,
            &[
                ValueIndex {
                    value: 2.0,
                    index: 1,
                },
                ValueIndex {
                    value: 5.0,
                    index: 9,
                },
            ],
            &mut p,
        );
        assert_eq!(p[0].index, 1);
        assert_eq!(p[1].index, 0);
    }

    #[test]
    fn invalid_op_kind_pairs_are_refused() {
        assert!(Op::BitAnd.check(Kind::F64).is_err());
        assert!(Op::MaxLoc.check(Kind::I32).is_err());
        assert_eq!(
            Op::Sum.check(ValueIndex::<f64>::KIND).unwrap_err().0,
            ErrorClass::Op
        );
        // MPI's type groups: no arithmetic on bytes or booleans, no order on
        // complex numbers, no built-in op at all on opaque bytes.
        assert!(Op::Sum.check(Kind::Byte).is_err());
        assert!(Op::BitXor.check(Kind::Byte).is_ok());
        assert!(Op::Sum.check(Kind::Bool).is_err());
        assert!(Op::LogicalXor.check(Kind::Bool).is_ok());
        assert!(Op::Max.check(Kind::C64).is_err());
        assert!(Op::Prod.check(Kind::C80).is_ok());
        assert!(Op::BitAnd.check(Kind::F80).is_err());
        assert!(Op::LogicalXor.check(Kind::F80).is_ok());
        assert!(Op::BitOr.check(Kind::Opaque).is_err());
    }

    #[test]
    fn complex_long_double_and_packed_pairs() {
        // (1 + 2i)(3 - 1i) = 5 + 5i
        let mut c = [3.0f64, -1.0];
        Op::Prod.apply(Kind::C64, bytes_of(&[1.0f64, 2.0]), bytes_of_mut(&mut c));
        assert_eq!(c, [5.0, 5.0]);
        let mut c = [0.5f32, 0.25];
        Op::Sum.apply(Kind::C32, bytes_of(&[1.0f32, 2.0]), bytes_of_mut(&mut c));
        assert_eq!(c, [1.5, 2.25]);
        // MPI_DOUBLE_INT packed: 12 bytes a pair, values unaligned after the first.
        let kind = Kind::Pair {
            value: Num::F64,
            index: Num::I32,
            packed: true,
        };
        assert_eq!(kind_size(kind), 12);
        let pack = |v: &[(f64, i32)]| -> Vec<u8> {
            v.iter()
                .flat_map(|(x, i)| [&x.to_ne_bytes()[..], &i.to_ne_bytes()[..]].concat())
                .collect()
        };
        let mut acc = pack(&[(1.0, 5), (2.0, 7)]);
        Op::MaxLoc.apply(kind, &pack(&[(1.0, 3), (1.5, 0)]), &mut acc);
        assert_eq!(acc, pack(&[(1.0, 3), (2.0, 7)]));
        // MPI_SHORT_INT packed is 6 bytes; C's struct is 8.
        let short = |packed| Kind::Pair {
            value: Num::I16,
            index: Num::I32,
            packed,
        };
        assert_eq!((kind_size(short(true)), kind_size(short(false))), (6, 8));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn long_double_reductions() {
        // 1.0, 2.0 and 3.0 as x87 values in 16 bytes.
        let ld = |exp: u16, mant: u64| {
            let mut v = [0u8; 16];
            v[..8].copy_from_slice(&mant.to_le_bytes());
            v[8..10].copy_from_slice(&exp.to_le_bytes());
            v
        };
        let (one, two, three) = (
            ld(0x3fff, 1 << 63),
            ld(0x4000, 1 << 63),
            ld(0x4000, 3 << 62),
        );
        let mut acc = [two, one].concat();
        Op::Sum.apply(Kind::F80, &[one, two].concat(), &mut acc);
        assert_eq!(acc, [three, three].concat());
        Op::Min.apply(Kind::F80, &[one, ld(0x4001, 1 << 63)].concat(), &mut acc);
        assert_eq!(acc, [one, three].concat());
        let mut l = [0u8; 16];
        Op::LogicalXor.apply(Kind::F80, &two, &mut l);
        assert_eq!(l, one);
        // (1 + 1i) * (1 + 1i) = 0 + 2i
        let mut c = [one, one].concat();
        Op::Prod.apply(Kind::C80, &[one, one].concat(), &mut c);
        assert_eq!(c, [[0u8; 16], two].concat());
        // LONG_DOUBLE_INT packed: a 16-byte value and its index, 20 bytes.
        let pair = Kind::Pair {
            value: Num::F80,
            index: Num::I32,
            packed: true,
        };
        let mut acc = [&one[..], &9i32.to_ne_bytes()].concat();
        Op::MaxLoc.apply(pair, &[&two[..], &4i32.to_ne_bytes()].concat(), &mut acc);
        assert_eq!(acc, [&two[..], &4i32.to_ne_bytes()].concat());
    }

    #[test]
    fn user_op_and_unaligned_buffers() {
        let op = Op::user::<i32>(false, |a, b| {
            for (y, x) in b.iter_mut().zip(a) {
                *y += *x * 10;
            }
        });
        let mut v = [1i32, 2];
        reduce(&op, &[3, 4], &mut v);
        assert_eq!(v, [31, 42]);
        // Unaligned byte views still reduce correctly.
        let mut raw = [0u8; 17];
        raw[1..9].copy_from_slice(bytes_of(&[7.0f64]));
        let mut acc = [0u8; 9];
        acc[1..9].copy_from_slice(bytes_of(&[1.0f64]));
        let (src, dst) = (&raw[1..9], &mut acc[1..9]);
        Op::Sum.apply(Kind::F64, src, dst);
        assert_eq!(f64::from_ne_bytes(acc[1..9].try_into().unwrap()), 8.0);
    }
}
