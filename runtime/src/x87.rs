//! x87 extended precision (C's `long double` on x86-64: 10 significant bytes
//! stored in 16). Rust has no such type, so the few operations the built-in
//! reductions need run on the FPU directly. Values are read and written in
//! place, at any alignment; the 6 padding bytes are never touched.

/// Bytes of one value in memory (the rest of its 16 is padding).
pub(crate) const SIGNIFICANT: usize = 10;

/// The value 1.0, as it sits in memory.
pub(crate) const ONE: [u8; SIGNIFICANT] = [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f];

/// Whether the value at the start of `v` is +0 or -0 (zero exponent and
/// significand; any other pattern, NaN included, is "true" for logical ops).
pub(crate) fn is_zero(v: &[u8]) -> bool {
    v[..8].iter().all(|&b| b == 0) && (v[8] == 0 && v[9] & 0x7f == 0)
}

/// Whether the value at the start of `v` is a NaN (all-ones exponent and a
/// fraction other than zero; the explicit integer bit is not part of it).
pub(crate) fn is_nan(v: &[u8]) -> bool {
    let exponent = u16::from_le_bytes([v[8], v[9]]) & 0x7fff;
    let significand = u64::from_le_bytes(v[..8].try_into().expect("8 bytes"));
    exponent == 0x7fff && significand << 1 != 0
}

/// Writes 1.0 or 0.0 over the value at the start of `v`.
pub(crate) fn set_bool(v: &mut [u8], b: bool) {
    v[..SIGNIFICANT].copy_from_slice(if b { &ONE } else { &[0; SIGNIFICANT] });
}

#[cfg(target_arch = "x86_64")]
mod fpu {
    use std::arch::asm;

    /// `y = x OP y` for a commutative x87 instruction that pops (`faddp`, `fmulp`).
    macro_rules! binary {
        ($(#[$doc:meta])* $name:ident, $instruction:literal) => {
            $(#[$doc])*
            pub(crate) fn $name(x: &[u8], y: &mut [u8]) {
                assert!(x.len() >= super::SIGNIFICANT && y.len() >= super::SIGNIFICANT);
                // SAFETY: both pointers cover 10 readable (y: writable) bytes,
                // checked above; the sequence pushes two registers and pops
                // both, leaving the x87 stack empty as the ABI requires.
                unsafe {
                    asm!(
                        "fld tbyte ptr [{x}]",
                        "fld tbyte ptr [{y}]",
                        $instruction,
                        "fstp tbyte ptr [{y}]",
                        x = in(reg) x.as_ptr(),
                        y = in(reg) y.as_mut_ptr(),
                        out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                        out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                        options(nostack),
                    )
                }
            }
        };
    }

    binary!(
        /// `y = x + y`.
        add,
        "faddp st(1), st"
    );
    binary!(
        /// `y = x * y`.
        mul,
        "fmulp st(1), st"
    );

    /// Complex `y = x * y`: each operand is (re, im), values 16 bytes apart.
    /// Subtraction is written as the addition of a negated product (only
    /// commutative x87 forms, no operand-order ambiguity).
    pub(crate) fn complex_mul(x: &[u8], y: &mut [u8]) {
        assert!(x.len() >= 16 + super::SIGNIFICANT && y.len() >= 16 + super::SIGNIFICANT);
        // SAFETY: both pointers cover two values (checked above); at most four
        // registers are in use and all are popped before the end.
        unsafe {
            asm!(
                // re = xr*yr - xi*yi
                "fld tbyte ptr [{x}]",
                "fld tbyte ptr [{y}]",
                "fmulp st(1), st",
                "fld tbyte ptr [{x} + 16]",
                "fld tbyte ptr [{y} + 16]",
                "fmulp st(1), st",
                "fchs",
                "faddp st(1), st",
                // im = xr*yi + xi*yr
                "fld tbyte ptr [{x}]",
                "fld tbyte ptr [{y} + 16]",
                "fmulp st(1), st",
                "fld tbyte ptr [{x} + 16]",
                "fld tbyte ptr [{y}]",
                "fmulp st(1), st",
                "faddp st(1), st",
                // st0 = im, st1 = re
                "fstp tbyte ptr [{y} + 16]",
                "fstp tbyte ptr [{y}]",
                x = in(reg) x.as_ptr(),
                y = in(reg) y.as_mut_ptr(),
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            )
        }
    }

    /// `a > b` (false when either is NaN).
    pub(crate) fn gt(a: &[u8], b: &[u8]) -> bool {
        assert!(a.len() >= super::SIGNIFICANT && b.len() >= super::SIGNIFICANT);
        let above: u8;
        // SAFETY: both pointers cover 10 readable bytes; two registers pushed,
        // both popped (fucomip pops one, fstp the other).
        unsafe {
            asm!(
                "fld tbyte ptr [{b}]",
                "fld tbyte ptr [{a}]",
                "fucomip st, st(1)",
                "fstp st(0)",
                "seta {r}",
                a = in(reg) a.as_ptr(),
                b = in(reg) b.as_ptr(),
                r = out(reg_byte) above,
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            )
        }
        above != 0
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use fpu::{add, complex_mul, gt, mul};

/// Whether this target can reduce `long double` values.
pub(crate) const SUPPORTED: bool = cfg!(target_arch = "x86_64");

#[cfg(not(target_arch = "x86_64"))]
mod fpu_absent {
    // `SUPPORTED` is false: `Op::check` refuses long double kinds before any
    // of these could run.
    pub(crate) fn add(_: &[u8], _: &mut [u8]) {
        unreachable!("long double reductions are refused on this target")
    }
    pub(crate) fn mul(_: &[u8], _: &mut [u8]) {
        unreachable!("long double reductions are refused on this target")
    }
    pub(crate) fn complex_mul(_: &[u8], _: &mut [u8]) {
        unreachable!("long double reductions are refused on this target")
    }
    pub(crate) fn gt(_: &[u8], _: &[u8]) -> bool {
        unreachable!("long double reductions are refused on this target")
    }
}
#[cfg(not(target_arch = "x86_64"))]
pub(crate) use fpu_absent::{add, complex_mul, gt, mul};

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// A long double from an f64 (exact: 53 bits fit in 64).
    fn ld(v: f64) -> [u8; 16] {
        let bits = v.to_bits();
        let sign = (bits >> 63) as u16;
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        let mut out = [0u8; 16];
        if exp == 0 && frac == 0 {
            out[9] = (sign << 7) as u8;
            return out;
        }
        let mant = (1u64 << 63) | (frac << 11);
        let e = (exp - 1023 + 16383) as u16 | (sign << 15);
        out[..8].copy_from_slice(&mant.to_le_bytes());
        out[8..10].copy_from_slice(&e.to_le_bytes());
        out
    }

    #[test]
    fn arithmetic_and_comparisons() {
        let mut y = ld(2.5);
        add(&ld(1.25), &mut y);
        assert_eq!(y, ld(3.75));
        mul(&ld(-2.0), &mut y);
        assert_eq!(y, ld(-7.5));
        assert!(gt(&ld(1.0), &ld(-1.0)));
        assert!(!gt(&ld(-1.0), &ld(1.0)));
        assert!(!gt(&ld(1.0), &ld(1.0)));
        assert!(is_zero(&ld(-0.0)) && !is_zero(&ld(1.0)));
        assert_eq!(&ld(1.0)[..SIGNIFICANT], &ONE);
        // (1 + 2i)(3 + 4i) = -5 + 10i
        let x = [ld(1.0), ld(2.0)].concat();
        let mut y = [ld(3.0), ld(4.0)].concat();
        complex_mul(&x, &mut y);
        assert_eq!(y, [ld(-5.0), ld(10.0)].concat());
    }
}
