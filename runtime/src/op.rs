//! Reduction operations: the built-in ones on every basic kind, and user functions.

use std::sync::Arc;

use crate::datatype::{kind_size, Equivalence, Kind, ValueIndex};
use crate::error::ErrorClass;

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

fn apply_kind_ok(op: &Op, kind: Kind) -> bool {
    use Kind::*;
    let integer = matches!(kind, I8 | U8 | I16 | U16 | I32 | U32 | I64 | U64);
    let float = matches!(kind, F32 | F64);
    let pair = matches!(
        kind,
        PairF32I32 | PairF64I32 | PairI64I32 | PairI32I32 | PairI16I32
    );
    match op {
        Op::User { .. } | Op::Replace | Op::NoOp => true,
        Op::Max | Op::Min | Op::Sum | Op::Prod => integer || float,
        Op::LogicalAnd | Op::LogicalOr | Op::LogicalXor => integer || float,
        Op::BitAnd | Op::BitOr | Op::BitXor => integer || kind == Opaque,
        Op::MinLoc | Op::MaxLoc => pair,
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

fn loc<T: PartialOrd + Copy>(op: &Op, input: &[u8], inout: &mut [u8]) {
    with_typed::<ValueIndex<T>>(input, inout, |a, b| {
        for (y, x) in b.iter_mut().zip(a) {
            let better = match op {
                Op::MinLoc => x.value < y.value,
                _ => x.value > y.value,
            };
            // Ties keep the smaller index, as MPI specifies.
            if better || (x.value == y.value && x.index < y.index) {
                *y = *x;
            }
        }
    })
}

fn apply_builtin(op: &Op, kind: Kind, input: &[u8], inout: &mut [u8]) {
    match kind {
        Kind::I8 => arith!(op, i8, input, inout, int),
        Kind::U8 | Kind::Opaque => arith!(op, u8, input, inout, int),
        Kind::I16 => arith!(op, i16, input, inout, int),
        Kind::U16 => arith!(op, u16, input, inout, int),
        Kind::I32 => arith!(op, i32, input, inout, int),
        Kind::U32 => arith!(op, u32, input, inout, int),
        Kind::I64 => arith!(op, i64, input, inout, int),
        Kind::U64 => arith!(op, u64, input, inout, int),
        Kind::F32 => arith!(op, f32, input, inout, float),
        Kind::F64 => arith!(op, f64, input, inout, float),
        Kind::PairF32I32 => loc::<f32>(op, input, inout),
        Kind::PairF64I32 => loc::<f64>(op, input, inout),
        Kind::PairI64I32 => loc::<i64>(op, input, inout),
        Kind::PairI32I32 => loc::<i32>(op, input, inout),
        Kind::PairI16I32 => loc::<i16>(op, input, inout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{bytes_of, bytes_of_mut};

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
            Op::Sum.check(Kind::PairF64I32).unwrap_err().0,
            ErrorClass::Op
        );
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
