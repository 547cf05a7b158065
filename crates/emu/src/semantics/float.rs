//! Single- and double-precision arithmetic as PTX defines it (ISA §9.7.3, §9.7.4):
//! rounding modifiers, `.ftz` (subnormal inputs and results become zero of the same sign),
//! `.sat` (clamp to [0, 1], NaN → +0), NaN results as the canonical NaN, the `.approx`
//! functions, `min`/`max` NaN rules, `testp` and `copysign`.
//!
//! Round-to-nearest-even uses the host's IEEE arithmetic, which is exact for `+ − × ÷ √`
//! and fused multiply–add; the directed modes go through [`super::exact`].

use ir::op::FloatClass;

use super::exact::{self, Format, Rounding};

/// Rounding and flushing modifiers of one floating-point instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FpMode {
    pub rnd: Rounding,
    pub ftz: bool,
    pub sat: bool,
}

impl FpMode {
    pub const RN: FpMode = FpMode {
        rnd: Rounding::NearestEven,
        ftz: false,
        sat: false,
    };
    pub fn new(rnd: Rounding, ftz: bool, sat: bool) -> FpMode {
        FpMode { rnd, ftz, sat }
    }
}

/// The two host float types PTX arithmetic is computed in.
pub trait Float: Copy + PartialEq + PartialOrd + std::fmt::Debug {
    const FMT: Format;
    const ZERO: Self;
    const ONE: Self;
    fn to_u64(self) -> u64;
    fn from_u64(bits: u64) -> Self;
    fn to_f64(self) -> f64;
    /// Rounds to nearest even.
    fn from_f64(x: f64) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn fma(self, b: Self, c: Self) -> Self;
    fn sqrt(self) -> Self;
    fn is_nan(self) -> bool;
    fn is_subnormal(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    fn canonical_nan() -> Self {
        Self::from_u64(Self::FMT.canonical_nan())
    }
}

macro_rules! impl_float {
    ($t:ty, $bits:ty, $fmt:expr) => {
        impl Float for $t {
            const FMT: Format = $fmt;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline]
            fn to_u64(self) -> u64 {
                self.to_bits() as u64
            }
            #[inline]
            fn from_u64(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline]
            fn fma(self, b: Self, c: Self) -> Self {
                self.mul_add(b, c)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn is_subnormal(self) -> bool {
                <$t>::is_subnormal(self)
            }
            #[inline]
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            #[inline]
            fn neg(self) -> Self {
                -self
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
        }
    };
}
impl_float!(f32, u32, Format::F32);
impl_float!(f64, u64, Format::F64);

/// `.ftz`: a subnormal becomes a zero of the same sign.
#[inline]
pub fn flush<F: Float>(x: F, ftz: bool) -> F {
    if ftz && x.is_subnormal() {
        if x.is_sign_negative() {
            F::ZERO.neg()
        } else {
            F::ZERO
        }
    } else {
        x
    }
}

/// `.sat`: clamp to [+0, 1]; NaN gives +0.
#[inline]
pub fn saturate<F: Float>(x: F) -> F {
    if x.is_nan() || x <= F::ZERO {
        F::ZERO
    } else if x > F::ONE {
        F::ONE
    } else {
        x
    }
}

/// Applies the result modifiers and canonicalizes NaN.
#[inline]
fn finish<F: Float>(r: F, m: FpMode) -> F {
    let r = if r.is_nan() {
        F::canonical_nan()
    } else {
        flush(r, m.ftz)
    };
    if m.sat {
        saturate(r)
    } else {
        r
    }
}

#[inline]
fn via_exact<F: Float>(op: impl FnOnce(Format, Rounding) -> u64, rnd: Rounding) -> F {
    F::from_u64(op(F::FMT, rnd))
}

/// `add{.rnd}{.ftz}{.sat}`
#[inline]
pub fn add<F: Float>(a: F, b: F, m: FpMode) -> F {
    let (a, b) = (flush(a, m.ftz), flush(b, m.ftz));
    let r = match m.rnd {
        Rounding::NearestEven => a.add(b),
        rnd => via_exact(|f, r| exact::add(a.to_u64(), b.to_u64(), f, r), rnd),
    };
    finish(r, m)
}

/// `sub{.rnd}{.ftz}{.sat}`
#[inline]
pub fn sub<F: Float>(a: F, b: F, m: FpMode) -> F {
    add(a, b.neg(), m)
}

/// `mul{.rnd}{.ftz}{.sat}`
#[inline]
pub fn mul<F: Float>(a: F, b: F, m: FpMode) -> F {
    let (a, b) = (flush(a, m.ftz), flush(b, m.ftz));
    let r = match m.rnd {
        Rounding::NearestEven => a.mul(b),
        rnd => via_exact(|f, r| exact::mul(a.to_u64(), b.to_u64(), f, r), rnd),
    };
    finish(r, m)
}

/// `fma.rnd{.ftz}{.sat}` and `mad.rnd` (which is fused on every target regsim models).
#[inline]
pub fn fma<F: Float>(a: F, b: F, c: F, m: FpMode) -> F {
    let (a, b, c) = (flush(a, m.ftz), flush(b, m.ftz), flush(c, m.ftz));
    let r = match m.rnd {
        Rounding::NearestEven => a.fma(b, c),
        rnd => via_exact(
            |f, r| exact::fma(a.to_u64(), b.to_u64(), c.to_u64(), f, r),
            rnd,
        ),
    };
    finish(r, m)
}

/// `div.rnd{.ftz}`: IEEE division.
#[inline]
pub fn div<F: Float>(a: F, b: F, m: FpMode) -> F {
    let (a, b) = (flush(a, m.ftz), flush(b, m.ftz));
    let r = match m.rnd {
        Rounding::NearestEven => a.div(b),
        rnd => via_exact(|f, r| exact::div(a.to_u64(), b.to_u64(), f, r), rnd),
    };
    finish(r, m)
}

/// `div.approx{.ftz}.f32`: `a · rcp(b)`. The ISA bounds the error at 2 ulp for
/// 2^-126 ≤ |b| ≤ 2^126 and returns zero for finite `a` when 2^126 < |b| < 2^128, which
/// this reproduces (the reciprocal flushes there, as the hardware's does).
pub fn div_approx_f32(a: f32, b: f32, ftz: bool) -> f32 {
    let (a, b) = (flush(a, ftz), flush(b, ftz));
    let rb = b.abs();
    let r = if rb > 2f32.powi(126) && rb.is_finite() && a.is_finite() {
        if a.is_sign_negative() != b.is_sign_negative() {
            -0.0
        } else {
            0.0
        }
    } else {
        a * (1.0 / b)
    };
    finish(
        r,
        FpMode {
            rnd: Rounding::NearestEven,
            ftz,
            sat: false,
        },
    )
}

/// `div.full{.ftz}.f32`: full-range division with at most 2 ulp error; computed exactly.
pub fn div_full_f32(a: f32, b: f32, ftz: bool) -> f32 {
    div(
        a,
        b,
        FpMode {
            rnd: Rounding::NearestEven,
            ftz,
            sat: false,
        },
    )
}

/// `rcp.rnd{.ftz}`: IEEE reciprocal.
#[inline]
pub fn rcp<F: Float>(a: F, m: FpMode) -> F {
    div(F::ONE, a, m)
}

/// `rcp.approx{.ftz}`: within 1 ulp per the ISA; computed correctly rounded.
#[inline]
pub fn rcp_approx<F: Float>(a: F, ftz: bool) -> F {
    div(
        F::ONE,
        a,
        FpMode {
            rnd: Rounding::NearestEven,
            ftz,
            sat: false,
        },
    )
}

/// `sqrt.rnd{.ftz}`: IEEE square root (√−0 = −0, negative → NaN).
#[inline]
pub fn sqrt<F: Float>(a: F, m: FpMode) -> F {
    let a = flush(a, m.ftz);
    let r = match m.rnd {
        Rounding::NearestEven => a.sqrt(),
        rnd => via_exact(|f, r| exact::sqrt(a.to_u64(), f, r), rnd),
    };
    finish(r, m)
}

/// `sqrt.approx{.ftz}.f32`: computed correctly rounded (the ISA allows more error).
#[inline]
pub fn sqrt_approx<F: Float>(a: F, ftz: bool) -> F {
    sqrt(
        a,
        FpMode {
            rnd: Rounding::NearestEven,
            ftz,
            sat: false,
        },
    )
}

/// `rsqrt.approx{.ftz}`: 1/√a from double precision (far inside the ISA's bound);
/// rsqrt(±0) = ±∞, rsqrt(+∞) = +0, negative → NaN.
pub fn rsqrt_approx<F: Float>(a: F, ftz: bool) -> F {
    let a = flush(a, ftz);
    let x = a.to_f64();
    let r = if x == 0.0 {
        if a.is_sign_negative() {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }
    } else if F::FMT == Format::F64 {
        // Two roundings in f64 (sqrt, then divide) stay within 1 ulp.
        1.0 / x.sqrt()
    } else {
        1.0 / x.sqrt()
    };
    finish(
        F::from_f64(r),
        FpMode {
            rnd: Rounding::NearestEven,
            ftz,
            sat: false,
        },
    )
}

/// The transcendental `.approx.f32` functions, evaluated in double precision and rounded:
/// every result is within the ISA's documented bound (sin/cos: 2^-20.9 absolute in
/// [-100π, 100π]; ex2: 2 ulp; lg2: 2^-22.6 absolute in [0.5, 2], 2^-22 relative elsewhere;
/// tanh: 2^-11 relative).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transcendental {
    Sin,
    Cos,
    Ex2,
    Lg2,
    Tanh,
}

pub fn approx_f32(f: Transcendental, a: f32, ftz: bool) -> f32 {
    let x = flush(a, ftz) as f64;
    let r = match f {
        Transcendental::Sin => x.sin(),
        Transcendental::Cos => x.cos(),
        Transcendental::Ex2 => x.exp2(),
        Transcendental::Lg2 => {
            if x == 0.0 {
                f64::NEG_INFINITY
            } else {
                x.log2()
            }
        }
        Transcendental::Tanh => x.tanh(),
    };
    // sin(-0) = -0 and tanh(-0) = -0 come out of the host functions already.
    finish(
        r as f32,
        FpMode {
            rnd: Rounding::NearestEven,
            ftz,
            sat: false,
        },
    )
}

/// `min{.ftz}{.NaN}`: the non-NaN operand if exactly one is NaN (canonical NaN if both, or
/// if either with `.NaN`); −0 is less than +0.
#[inline]
pub fn min<F: Float>(a: F, b: F, ftz: bool, propagate_nan: bool) -> F {
    minmax(a, b, ftz, propagate_nan, true)
}

/// `max{.ftz}{.NaN}`; see [`min`].
#[inline]
pub fn max<F: Float>(a: F, b: F, ftz: bool, propagate_nan: bool) -> F {
    minmax(a, b, ftz, propagate_nan, false)
}

#[inline]
fn minmax<F: Float>(a: F, b: F, ftz: bool, propagate_nan: bool, want_min: bool) -> F {
    let (a, b) = (flush(a, ftz), flush(b, ftz));
    match (a.is_nan(), b.is_nan()) {
        (true, true) => return F::canonical_nan(),
        (true, false) => return if propagate_nan { F::canonical_nan() } else { b },
        (false, true) => return if propagate_nan { F::canonical_nan() } else { a },
        _ => {}
    }
    let a_less = if a == b {
        a.is_sign_negative() && !b.is_sign_negative()
    } else {
        a < b
    };
    if a_less == want_min {
        a
    } else {
        b
    }
}

/// `abs{.ftz}`: clears the sign bit (NaN stays NaN).
#[inline]
pub fn abs<F: Float>(a: F, ftz: bool) -> F {
    flush(a, ftz).abs()
}

/// `neg{.ftz}`: flips the sign bit.
#[inline]
pub fn neg<F: Float>(a: F, ftz: bool) -> F {
    flush(a, ftz).neg()
}

/// `copysign d, a, b`: `b`'s magnitude with `a`'s sign.
#[inline]
pub fn copysign<F: Float>(a: F, b: F) -> F {
    if a.is_sign_negative() == b.is_sign_negative() {
        b
    } else {
        b.neg()
    }
}

/// `testp.op`: zero is neither normal nor subnormal.
pub fn testp<F: Float>(a: F, class: FloatClass) -> bool {
    let is_inf = !a.is_nan() && a.abs().to_f64() == f64::INFINITY;
    match class {
        FloatClass::Finite => !a.is_nan() && !is_inf,
        FloatClass::Infinite => is_inf,
        FloatClass::Number => !a.is_nan(),
        FloatClass::NotANumber => a.is_nan(),
        FloatClass::Normal => !a.is_nan() && !is_inf && !a.is_subnormal() && a != F::ZERO,
        FloatClass::Subnormal => a.is_subnormal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RZ: FpMode = FpMode {
        rnd: Rounding::Zero,
        ftz: false,
        sat: false,
    };
    const RM: FpMode = FpMode {
        rnd: Rounding::Down,
        ftz: false,
        sat: false,
    };
    const RP: FpMode = FpMode {
        rnd: Rounding::Up,
        ftz: false,
        sat: false,
    };
    const FTZ: FpMode = FpMode {
        rnd: Rounding::NearestEven,
        ftz: true,
        sat: false,
    };
    const SAT: FpMode = FpMode {
        rnd: Rounding::NearestEven,
        ftz: false,
        sat: true,
    };

    #[test]
    fn directed_add_and_mul_f32() {
        let a = 1.0f32;
        let b = 2f32.powi(-30);
        assert_eq!(add(a, b, FpMode::RN), 1.0);
        assert_eq!(add(a, b, RZ), 1.0);
        assert_eq!(add(a, b, RP), 1.0f32.next_up());
        assert_eq!(add(a, -b, RM), 1.0f32.next_down());
        assert_eq!(add(a, -b, RZ), 1.0f32.next_down());
        assert_eq!(add(a, -b, RP), 1.0);
        // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46
        assert_eq!(
            mul(1.0f32.next_up(), 1.0f32.next_up(), RZ),
            1.0f32.next_up().next_up()
        );
        assert_eq!(
            mul(1.0f32.next_up(), 1.0f32.next_up(), RP),
            1.0f32.next_up().next_up().next_up()
        );
        assert_eq!(sub(1.0f32, 1.0, RM).to_bits(), 0x8000_0000);
        assert_eq!(sub(1.0f32, 1.0, FpMode::RN).to_bits(), 0);
        // fma rounds once: 1 + 2^-24 + 2^-48 (sticky past the tie) rounds up.
        let x = 1.0f32 + 2f32.powi(-24) * 2.0; // 1 + 2^-23
        assert_eq!(fma(x, x, -1.0, FpMode::RN), 2f32.powi(-22) + 2f32.powi(-46));
        assert_eq!(fma(1.0f64, 2.0, f64::MAX, RZ), f64::MAX);
        assert_eq!(fma(1.0f64, 2.0, f64::MAX, RP), f64::INFINITY);
        assert_eq!(fma(1.0f64, 2.0, f64::MAX, FpMode::RN), f64::MAX);
        assert_eq!(add(f64::MAX, f64::MAX, RZ), f64::MAX);
        assert_eq!(add(-f64::MAX, -f64::MAX, RP), -f64::MAX);
        assert_eq!(add(-f64::MAX, -f64::MAX, RM), f64::NEG_INFINITY);
    }

    #[test]
    fn ftz_flushes_inputs_and_results_keeping_sign() {
        let sub = f32::from_bits(0x0000_0100);
        assert_eq!(add(sub, 0.0, FpMode::RN), sub);
        assert_eq!(add(sub, 0.0, FTZ).to_bits(), 0);
        assert_eq!(add(-sub, -0.0, FTZ).to_bits(), 0x8000_0000);
        assert_eq!(
            mul(f32::MIN_POSITIVE, 0.5, FpMode::RN),
            f32::MIN_POSITIVE / 2.0
        );
        assert_eq!(mul(f32::MIN_POSITIVE, -0.5, FTZ).to_bits(), 0x8000_0000);
        assert_eq!(div(1.0f32, sub, FTZ), f32::INFINITY);
        assert_eq!(sqrt(-sub, FTZ).to_bits(), 0x8000_0000);
        assert!(sqrt(-sub, FpMode::RN).is_nan());
        assert_eq!(min(sub, 0.0, true, false).to_bits(), 0);
    }

    #[test]
    fn sat_clamps_and_maps_nan_to_zero() {
        assert_eq!(add(0.75f32, 0.5, SAT), 1.0);
        assert_eq!(add(-0.75f32, 0.5, SAT).to_bits(), 0);
        assert_eq!(mul(f32::INFINITY, 0.0, SAT).to_bits(), 0);
        assert_eq!(add(0.25f32, 0.5, SAT), 0.75);
        assert_eq!(add(-0.0f32, -0.0, SAT).to_bits(), 0);
    }

    #[test]
    fn nan_results_are_canonical() {
        let weird = f32::from_bits(0xFFC0_1234);
        assert_eq!(add(weird, 1.0, FpMode::RN).to_bits(), 0x7FFF_FFFF);
        assert_eq!(mul(f32::INFINITY, 0.0, RZ).to_bits(), 0x7FFF_FFFF);
        assert_eq!(
            fma(f64::INFINITY, 1.0, f64::NEG_INFINITY, FpMode::RN).to_bits(),
            0x7FFF_FFFF_FFFF_FFFF
        );
        assert_eq!(div(0.0f32, 0.0, FpMode::RN).to_bits(), 0x7FFF_FFFF);
    }

    #[test]
    fn min_max_nan_and_signed_zero_rules() {
        assert_eq!(min(f32::NAN, 3.0, false, false), 3.0);
        assert_eq!(max(2.0f32, f32::NAN, false, false), 2.0);
        assert_eq!(max(f32::NAN, f32::NAN, false, false).to_bits(), 0x7FFF_FFFF);
        assert!(min(f32::NAN, 3.0, false, true).is_nan());
        assert_eq!(min(0.0f32, -0.0, false, false).to_bits(), 0x8000_0000);
        assert_eq!(max(-0.0f32, 0.0, false, false).to_bits(), 0);
        assert_eq!(min(-1.0f64, 2.0, false, false), -1.0);
        assert_eq!(max(f64::NEG_INFINITY, -7.0, false, false), -7.0);
    }

    #[test]
    fn div_rcp_sqrt_special_cases() {
        assert_eq!(div(1.0f32, -0.0, FpMode::RN), f32::NEG_INFINITY);
        assert_eq!(rcp(-0.0f64, RZ), f64::NEG_INFINITY);
        assert_eq!(rcp(3.0f32, RZ).to_bits(), 0x3EAA_AAAA);
        assert_eq!(rcp(3.0f32, RP).to_bits(), 0x3EAA_AAAB);
        assert_eq!(sqrt(-0.0f32, RP).to_bits(), 0x8000_0000);
        assert_eq!(sqrt(2.0f32, RZ).to_bits(), 0x3FB5_04F3);
        assert_eq!(sqrt(2.0f32, RP).to_bits(), 0x3FB5_04F4);
        assert_eq!(rsqrt_approx(4.0f32, false), 0.5);
        assert_eq!(rsqrt_approx(-0.0f32, false), f32::NEG_INFINITY);
        assert_eq!(rsqrt_approx(f32::INFINITY, false), 0.0);
        assert!(rsqrt_approx(-1.0f64, false).is_nan());
        assert_eq!(div_approx_f32(1.0, 2f32.powi(127), false), 0.0);
        assert_eq!(div_full_f32(1.0, 2f32.powi(127), false), 2f32.powi(-127));
        assert_eq!(div_approx_f32(6.0, 3.0, false), 2.0);
    }

    #[test]
    fn transcendental_approximations_within_isa_bounds() {
        let mut x = -300.0f32;
        while x < 300.0 {
            let s = approx_f32(Transcendental::Sin, x, false) as f64;
            assert!((s - (x as f64).sin()).abs() < 2f64.powf(-20.9));
            let c = approx_f32(Transcendental::Cos, x, false) as f64;
            assert!((c - (x as f64).cos()).abs() < 2f64.powf(-20.9));
            x += 0.173;
        }
        assert_eq!(approx_f32(Transcendental::Ex2, 10.0, false), 1024.0);
        assert_eq!(
            approx_f32(Transcendental::Ex2, f32::NEG_INFINITY, false),
            0.0
        );
        assert_eq!(
            approx_f32(Transcendental::Lg2, 0.0, false),
            f32::NEG_INFINITY
        );
        assert_eq!(approx_f32(Transcendental::Lg2, 8.0, false), 3.0);
        assert!(approx_f32(Transcendental::Lg2, -1.0, false).is_nan());
        assert!(approx_f32(Transcendental::Sin, f32::INFINITY, false).is_nan());
        assert_eq!(
            approx_f32(Transcendental::Tanh, -0.0, false).to_bits(),
            0x8000_0000
        );
        assert_eq!(
            approx_f32(Transcendental::Lg2, f32::from_bits(1), true),
            f32::NEG_INFINITY
        );
    }

    #[test]
    fn testp_and_copysign() {
        use FloatClass::*;
        let sub = f64::from_bits(1);
        assert!(testp(sub, Subnormal) && !testp(sub, Normal) && testp(sub, Finite));
        assert!(!testp(0.0f32, Normal) && !testp(0.0f32, Subnormal));
        assert!(testp(f32::INFINITY, Infinite) && !testp(f32::INFINITY, Finite));
        assert!(
            testp(f32::NAN, NotANumber) && !testp(f32::NAN, Number) && !testp(f32::NAN, Finite)
        );
        assert!(testp(1.5f32, Normal));
        assert_eq!(copysign(-1.0f32, 2.0), -2.0);
        assert_eq!(copysign(1.0f64, -0.0).to_bits(), 0);
    }
}
