//! `cvt` between every integer and floating-point type (ISA §9.7.9.21).
//!
//! - integer → integer: sign- or zero-extend by the source type, then truncate, or clamp
//!   to the destination range with `.sat`;
//! - integer → float and float → narrower float: round with `.rn/.rz/.rm/.rp` (default
//!   `.rn`);
//! - float → float of the same or wider type with `.rni/.rzi/.rmi/.rpi`: round to an
//!   integral value;
//! - float → integer: round with `.rni/.rzi/.rmi/.rpi` (default `.rzi`), always clamped to
//!   the destination range, NaN → 0;
//! - `.ftz` flushes subnormal f32 inputs and results; `.sat` on a float destination clamps
//!   to [0, 1] with NaN → 0.

use super::exact::{self, Format, Rounding};
use super::int::IntType;

/// A `cvt` operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CvtType {
    Int(IntType),
    F16,
    Bf16,
    F32,
    F64,
}

impl CvtType {
    fn format(self) -> Option<Format> {
        match self {
            CvtType::Int(_) => None,
            CvtType::F16 => Some(Format::F16),
            CvtType::Bf16 => Some(Format::BF16),
            CvtType::F32 => Some(Format::F32),
            CvtType::F64 => Some(Format::F64),
        }
    }
}

/// The rounding modifier of a `cvt`, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CvtRounding {
    None,
    /// `.rn .rz .rm .rp`
    Float(Rounding),
    /// `.rni .rzi .rmi .rpi`
    Integer(Rounding),
}

/// Rounds a double to an integral value.
#[inline]
pub fn round_integral(x: f64, r: Rounding) -> f64 {
    match r {
        Rounding::NearestEven => x.round_ties_even(),
        Rounding::Zero => x.trunc(),
        Rounding::Down => x.floor(),
        Rounding::Up => x.ceil(),
    }
}

/// Widens a float of `fmt` to f64 exactly (NaN stays NaN).
#[inline]
fn to_f64(bits: u64, fmt: Format) -> f64 {
    if fmt == Format::F64 {
        f64::from_bits(bits)
    } else if fmt == Format::F32 {
        f32::from_bits(bits as u32) as f64
    } else {
        f64::from_bits(exact::convert(
            bits,
            fmt,
            Format::F64,
            Rounding::NearestEven,
        ))
    }
}

fn flush_bits(bits: u64, fmt: Format, ftz: bool) -> u64 {
    if !ftz || fmt != Format::F32 {
        return bits;
    }
    let x = f32::from_bits(bits as u32);
    if x.is_subnormal() {
        bits & 0x8000_0000
    } else {
        bits
    }
}

fn saturate_bits(bits: u64, fmt: Format) -> u64 {
    let one = exact::convert(1.0f64.to_bits(), Format::F64, fmt, Rounding::NearestEven);
    match exact::unpack(bits, fmt) {
        exact::Unpacked::Nan | exact::Unpacked::Zero { .. } => 0,
        u if u.is_negative() => 0,
        exact::Unpacked::Inf { .. } => one,
        _ => bits.min(one),
    }
}

/// `cvt{.rnd}{.ftz}{.sat}.dst.src d, a`: `a`'s bits in, `d`'s bits out (in the low bits).
pub fn cvt(dst: CvtType, src: CvtType, a: u64, rnd: CvtRounding, ftz: bool, sat: bool) -> u64 {
    match (dst.format(), src.format()) {
        (None, None) => {
            let (CvtType::Int(d), CvtType::Int(s)) = (dst, src) else {
                unreachable!()
            };
            let v = s.value(a);
            if sat {
                d.saturate(v)
            } else {
                d.wrap(v as u64)
            }
        }
        (Some(df), None) => {
            let CvtType::Int(s) = src else { unreachable!() };
            let v = s.value(a);
            let mode = match rnd {
                CvtRounding::Float(r) => r,
                _ => Rounding::NearestEven,
            };
            let bits = match (df, mode) {
                (f, Rounding::NearestEven) if f == Format::F32 => (v as f32).to_bits() as u64,
                (f, Rounding::NearestEven) if f == Format::F64 => (v as f64).to_bits(),
                _ => exact::from_int(v < 0, v.unsigned_abs() as u64, df, mode),
            };
            let bits = flush_bits(bits, df, ftz);
            if sat {
                saturate_bits(bits, df)
            } else {
                bits
            }
        }
        (None, Some(sf)) => {
            let CvtType::Int(d) = dst else { unreachable!() };
            let x = to_f64(flush_bits(a, sf, ftz), sf);
            if x.is_nan() {
                return 0;
            }
            let mode = match rnd {
                CvtRounding::Integer(r) | CvtRounding::Float(r) => r,
                CvtRounding::None => Rounding::Zero,
            };
            // `as` saturates at the i128 range, far beyond every destination.
            d.saturate(round_integral(x, mode) as i128)
        }
        (Some(df), Some(sf)) => {
            let a = flush_bits(a, sf, ftz);
            let bits = match rnd {
                CvtRounding::Integer(r) => {
                    let x = to_f64(a, sf);
                    let r = if x.is_nan() {
                        f64::NAN
                    } else {
                        round_integral(x, r)
                    };
                    // An integral value of the source format is exact in the destination
                    // unless it is narrower, where nearest is as good as any rounding.
                    exact::convert(r.to_bits(), Format::F64, df, Rounding::NearestEven)
                }
                CvtRounding::Float(r) => exact::convert(a, sf, df, r),
                CvtRounding::None => exact::convert(a, sf, df, Rounding::NearestEven),
            };
            let bits = flush_bits(bits, df, ftz);
            if sat {
                saturate_bits(bits, df)
            } else {
                bits
            }
        }
    }
}

/// The rounding of `cvt.{rna,rn,rz}.tf32.f32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tf32Rounding {
    /// `.rna`: to nearest, ties away from zero.
    NearestAway,
    /// `.rn`: to nearest, ties to even.
    NearestEven,
    /// `.rz`: toward zero.
    Zero,
}

/// The largest finite tf32 value, in f32's layout (0x1.ff8p127).
pub const TF32_MAX: u32 = 0x7F7F_E000;
/// The bits of an f32 that tf32 has no room for (13 low mantissa bits).
const TF32_DROPPED: u32 = 0x1FFF;

/// `cvt.rnd{.satfinite}{.relu}.tf32.f32 d, a`: the tf32 value in f32's layout, its 13 low
/// mantissa bits zero.
///
/// `.rna` (and `.rna.satfinite`) is what ptxas emits for it on sm_80 and sm_90 (read in
/// `cuobjdump -sass` of ptxas 11.8 and 12.9 output), computed on the bits: a value that is
/// finite (`|a| < inf`) gets half an ulp (0x1000) added, then the 13 low bits are cleared;
/// an infinity or NaN is only masked. So a finite value rounds half away from zero, a
/// carry into the exponent is exact, subnormals round like normals (no flush), the largest
/// values overflow to infinity, and a NaN keeps its sign and upper payload (a NaN whose
/// payload is only in the low 13 bits becomes an infinity, as on the GPU). With
/// `.satfinite` a result that is infinite or NaN then has 0x2000 subtracted: infinities
/// become the largest finite value of their sign, NaNs lose one payload step.
///
/// `.rn` and `.rz` are one instruction on sm_90 (`F2FP.TF32.F32.PACK_B`) whose results
/// regsim could not read off a GPU; they are the IEEE roundings to 10 mantissa bits:
/// overflow gives infinity (`.rn`) or the largest finite value (`.rz`), NaN gives the
/// canonical NaN 0x7FFFFFFF, `.satfinite` turns infinities into the largest finite value,
/// and `.relu` turns negative results (-0 included) into +0 and leaves NaN.
pub fn f32_to_tf32(a: u32, rnd: Tf32Rounding, satfinite: bool, relu: bool) -> u32 {
    let finite = a & 0x7F80_0000 != 0x7F80_0000;
    if rnd == Tf32Rounding::NearestAway {
        let r = if finite { a.wrapping_add(0x1000) } else { a } & !TF32_DROPPED;
        return if satfinite && r & 0x7F80_0000 == 0x7F80_0000 {
            r.wrapping_sub(0x2000)
        } else {
            r
        };
    }
    if !finite && a & 0x007F_FFFF != 0 {
        return 0x7FFF_FFFF;
    }
    let mut r = match rnd {
        Tf32Rounding::NearestEven if finite => {
            let half = 0x0FFF + ((a >> 13) & 1);
            a.wrapping_add(half) & !TF32_DROPPED
        }
        _ => a & !TF32_DROPPED,
    };
    if satfinite && r & 0x7FFF_FFFF == 0x7F80_0000 {
        r = (r & 0x8000_0000) | TF32_MAX;
    }
    if relu && r & 0x8000_0000 != 0 {
        r = 0;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use CvtRounding::*;
    use Rounding::*;
    const S32: CvtType = CvtType::Int(IntType::S32);
    const U32: CvtType = CvtType::Int(IntType::U32);
    const U8: CvtType = CvtType::Int(IntType::U8);
    const S8: CvtType = CvtType::Int(IntType::S8);
    const S64: CvtType = CvtType::Int(IntType::S64);
    const U64: CvtType = CvtType::Int(IntType::U64);
    const F32: CvtType = CvtType::F32;
    const F64: CvtType = CvtType::F64;

    fn f32b(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn integer_to_integer() {
        assert_eq!(cvt(S32, S8, 0x80, None, false, false), 0xFFFF_FF80);
        assert_eq!(cvt(S32, U8, 0x80, None, false, false), 0x80);
        assert_eq!(cvt(U8, S32, 0x1FF, None, false, false), 0xFF);
        assert_eq!(cvt(U8, S32, 0x1FF, None, false, true), 0xFF);
        assert_eq!(cvt(U8, S32, 0xFFFF_FFFF, None, false, true), 0);
        assert_eq!(cvt(S8, S32, 300, None, false, true), 0x7F);
        assert_eq!(cvt(U32, S64, u64::MAX, None, false, true), 0);
        assert_eq!(cvt(S64, U32, 0xFFFF_FFFF, None, false, false), 0xFFFF_FFFF);
        assert_eq!(cvt(U64, S32, 0xFFFF_FFFF, None, false, false), u64::MAX);
    }

    #[test]
    fn float_to_integer_rounds_clamps_and_zeroes_nan() {
        assert_eq!(
            cvt(S32, F32, f32b(2.5), Integer(NearestEven), false, false),
            2
        );
        assert_eq!(
            cvt(S32, F32, f32b(3.5), Integer(NearestEven), false, false),
            4
        );
        assert_eq!(
            cvt(S32, F32, f32b(-2.5), Integer(Zero), false, false),
            0xFFFF_FFFE
        );
        assert_eq!(
            cvt(S32, F32, f32b(-2.5), Integer(Down), false, false),
            0xFFFF_FFFD
        );
        assert_eq!(cvt(S32, F32, f32b(2.1), Integer(Up), false, false), 3);
        assert_eq!(
            cvt(S32, F32, f32b(f32::NAN), Integer(Zero), false, false),
            0
        );
        assert_eq!(
            cvt(S32, F32, f32b(3e9), Integer(Zero), false, false),
            0x7FFF_FFFF
        );
        assert_eq!(
            cvt(
                S32,
                F32,
                f32b(f32::NEG_INFINITY),
                Integer(Zero),
                false,
                false
            ),
            0x8000_0000
        );
        assert_eq!(cvt(U32, F32, f32b(-1.0), Integer(Zero), false, false), 0);
        assert_eq!(
            cvt(U8, F32, f32b(300.0), Integer(NearestEven), false, false),
            255
        );
        assert_eq!(
            cvt(U64, F64, 1e30f64.to_bits(), Integer(Zero), false, false),
            u64::MAX
        );
        assert_eq!(
            cvt(S64, F64, (-1e30f64).to_bits(), Integer(Zero), false, false),
            i64::MIN as u64
        );
        let tiny = 1u64; // smallest f32 subnormal
        assert_eq!(cvt(S32, F32, tiny, Integer(Up), false, false), 1);
        assert_eq!(cvt(S32, F32, tiny, Integer(Up), true, false), 0);
        assert_eq!(
            cvt(
                S32,
                CvtType::F16,
                0x3E00,
                Integer(NearestEven),
                false,
                false
            ),
            2
        );
    }

    #[test]
    fn integer_to_float_rounds() {
        let big = (1u64 << 24) + 1;
        assert_eq!(
            cvt(F32, U32, big, Float(NearestEven), false, false),
            f32b(16777216.0)
        );
        assert_eq!(
            cvt(F32, U32, big, Float(Up), false, false),
            f32b(16777218.0)
        );
        assert_eq!(
            cvt(F32, S32, (-(big as i64)) as u64, Float(Down), false, false),
            f32b(-16777218.0)
        );
        assert_eq!(
            cvt(F32, S32, (-(big as i64)) as u64, Float(Zero), false, false),
            f32b(-16777216.0)
        );
        assert_eq!(
            cvt(F64, U64, u64::MAX, Float(Zero), false, false),
            0x43EF_FFFF_FFFF_FFFF
        );
        assert_eq!(
            cvt(F64, U64, u64::MAX, None, false, false),
            18446744073709551616f64.to_bits()
        );
        assert_eq!(
            cvt(CvtType::F16, S32, 70000, Float(NearestEven), false, false),
            0x7C00
        );
        assert_eq!(
            cvt(CvtType::F16, S32, 70000, Float(Zero), false, false),
            0x7BFF
        );
        assert_eq!(cvt(F32, S32, 2, None, false, true), f32b(1.0));
    }

    #[test]
    fn float_to_float() {
        let third = (1.0f64 / 3.0).to_bits();
        assert_eq!(cvt(F32, F64, third, Float(Zero), false, false), 0x3EAA_AAAA);
        assert_eq!(cvt(F32, F64, third, Float(Up), false, false), 0x3EAA_AAAB);
        assert_eq!(
            cvt(
                F32,
                F64,
                1e-40f64.to_bits(),
                Float(NearestEven),
                true,
                false
            ),
            0
        );
        assert_eq!(
            cvt(
                F32,
                F64,
                (-1e-40f64).to_bits(),
                Float(NearestEven),
                true,
                false
            ),
            0x8000_0000
        );
        assert_eq!(
            cvt(F32, F64, 1e300f64.to_bits(), Float(Zero), false, false),
            f32b(f32::MAX)
        );
        assert_eq!(cvt(F64, F32, 1, None, true, false), 0);
        assert_eq!(
            cvt(F64, F32, 1, None, false, false),
            2f64.powi(-149).to_bits()
        );
        assert_eq!(
            cvt(F32, F32, f32b(2.5), Integer(NearestEven), false, false),
            f32b(2.0)
        );
        assert_eq!(
            cvt(F32, F32, f32b(-2.5), Integer(Up), false, false),
            f32b(-2.0)
        );
        assert_eq!(
            cvt(F32, F32, f32b(-0.4), Integer(NearestEven), false, false),
            f32b(-0.0)
        );
        assert_eq!(
            cvt(F64, F64, 7.9f64.to_bits(), Integer(Down), false, false),
            7.0f64.to_bits()
        );
        assert_eq!(cvt(F32, F32, f32b(1.5), None, false, true), f32b(1.0));
        assert_eq!(cvt(F32, F32, f32b(f32::NAN), None, false, true), 0);
        assert_eq!(
            cvt(
                CvtType::F16,
                F32,
                f32b(1.0),
                Float(NearestEven),
                false,
                false
            ),
            0x3C00
        );
        assert_eq!(
            cvt(F32, CvtType::F16, 0x3C00, None, false, false),
            f32b(1.0)
        );
        assert_eq!(
            cvt(
                CvtType::Bf16,
                F32,
                f32b(-2.0),
                Float(NearestEven),
                false,
                false
            ),
            0xC000
        );
    }

    #[test]
    fn tf32_rna_rounds_half_away_from_zero_on_the_bits() {
        use Tf32Rounding::NearestAway as A;
        let t = |x: u32| f32_to_tf32(x, A, false, false);
        // Exact values keep their bits; the low 13 bits are cleared.
        assert_eq!(t(0x3F80_0000), 0x3F80_0000);
        assert_eq!(t(0x3F80_0FFF), 0x3F80_0000); // below half an ulp: down
        assert_eq!(t(0x3F80_1000), 0x3F80_2000); // tie, even below: away (up)
        assert_eq!(t(0x3F80_3000), 0x3F80_4000); // tie, odd below: away (up)
        assert_eq!(t(0xBF80_1000), 0xBF80_2000); // negative tie: away from zero
        assert_eq!(t(0xBF80_0FFF), 0xBF80_0000);
        // 1 + 2^-11 (a tie) is 1 + 2^-10 in tf32, whatever rn would say.
        assert_eq!(f32::from_bits(t(1.000_488_3_f32.to_bits())), 1.000_976_6);
        // Carry into the exponent: 1.999.. rounds to 2.
        assert_eq!(t(0x3FFF_F000), 0x4000_0000);
        // Subnormals round like normals (no flush); the smallest ones round to 0 or up.
        assert_eq!(t(0x0000_0FFF), 0);
        assert_eq!(t(0x0000_1000), 0x0000_2000);
        assert_eq!(t(0x807F_F000), 0x8080_0000); // largest subnormal becomes the smallest normal
                                                 // Zeros, infinities.
        assert_eq!(t(0x8000_0000), 0x8000_0000);
        assert_eq!(t(0x7F80_0000), 0x7F80_0000);
        assert_eq!(t(0xFF80_0000), 0xFF80_0000);
        // Overflow: the largest f32 rounds up to infinity.
        assert_eq!(t(0x7F7F_FFFF), 0x7F80_0000);
        assert_eq!(t(0x7F7F_EFFF), TF32_MAX);
        // NaNs are only masked: payload in the upper bits survives, low payload is lost.
        assert_eq!(t(0x7FC0_0000), 0x7FC0_0000);
        assert_eq!(t(0x7FFF_FFFF), 0x7FFF_E000);
        assert_eq!(t(0xFFC0_1234), 0xFFC0_0000);
        assert_eq!(t(0x7F80_0001), 0x7F80_0000);
    }

    #[test]
    fn tf32_rna_satfinite_clamps_infinities_as_ptxas_does() {
        use Tf32Rounding::NearestAway as A;
        let t = |x: u32| f32_to_tf32(x, A, true, false);
        assert_eq!(t(0x7F80_0000), TF32_MAX);
        assert_eq!(t(0xFF80_0000), 0x8000_0000 | TF32_MAX);
        assert_eq!(t(0x7F7F_FFFF), TF32_MAX); // overflow, then clamped
        assert_eq!(t(0x3F80_1000), 0x3F80_2000); // finite results unchanged
        assert_eq!(t(0x7FC0_0000), 0x7FBF_E000); // a NaN stays a NaN, one step lower
        assert_eq!(t(0x7F80_0001), TF32_MAX); // masked to infinity, then clamped
    }

    #[test]
    fn tf32_rn_and_rz() {
        use Tf32Rounding::{NearestEven as N, Zero as Z};
        let rn = |x: u32| f32_to_tf32(x, N, false, false);
        let rz = |x: u32| f32_to_tf32(x, Z, false, false);
        assert_eq!(rn(0x3F80_1000), 0x3F80_0000); // tie, even below: down
        assert_eq!(rn(0x3F80_3000), 0x3F80_4000); // tie, odd below: up
        assert_eq!(rn(0x3F80_1001), 0x3F80_2000);
        assert_eq!(rn(0xBF80_3000), 0xBF80_4000);
        assert_eq!(rn(0x0000_1000), 0); // subnormal tie to even
        assert_eq!(rn(0x0000_3000), 0x0000_4000);
        assert_eq!(rn(0x7F7F_F000), 0x7F80_0000); // tie at the top: to even, infinity
        assert_eq!(rn(0x7F80_0000), 0x7F80_0000);
        assert_eq!(rn(0x7F80_0001), 0x7FFF_FFFF); // NaN: canonical
        assert_eq!(rz(0x3F80_1FFF), 0x3F80_0000);
        assert_eq!(rz(0xBF80_1FFF), 0xBF80_0000);
        assert_eq!(rz(0x7F7F_FFFF), TF32_MAX);
        assert_eq!(rz(0xFF80_0000), 0xFF80_0000);
        assert_eq!(rz(0xFFC0_0000), 0x7FFF_FFFF);
        // .satfinite and .relu.
        assert_eq!(f32_to_tf32(0x7F7F_F000, N, true, false), TF32_MAX);
        assert_eq!(
            f32_to_tf32(0xFF80_0000, Z, true, false),
            0x8000_0000 | TF32_MAX
        );
        assert_eq!(f32_to_tf32(0xBF80_0000, N, false, true), 0);
        assert_eq!(f32_to_tf32(0x8000_0000, Z, false, true), 0);
        assert_eq!(f32_to_tf32(0x3F80_1FFF, Z, false, true), 0x3F80_0000);
        assert_eq!(f32_to_tf32(0xFFC0_0000, N, false, true), 0x7FFF_FFFF);
    }

    #[test]
    fn tf32_rounding_agrees_with_an_f64_reference_on_many_values() {
        // Every result is the f32 input rounded to 11 significant bits (normals) or to a
        // multiple of 2^-136 (subnormals), computed independently in f64.
        let mut x: u32 = 0x1234_5678;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let v = f32::from_bits(x);
            if !v.is_finite() {
                continue;
            }
            let exp = ((x >> 23) & 0xFF).max(1) as i32;
            let ulp = 2f64.powi(exp - 127 - 10);
            // Round the magnitude, then give the result the input's sign (-0 included).
            let q = f64::from(v.abs()) / ulp;
            let (fl, frac) = (q.floor(), q - q.floor());
            let away = if frac >= 0.5 { fl + 1.0 } else { fl };
            let even = if frac > 0.5 || frac == 0.5 && fl % 2.0 != 0.0 {
                fl + 1.0
            } else {
                fl
            };
            let sign = x & 0x8000_0000;
            let as_f32 = |m: f64| sign | ((m * ulp) as f32).to_bits();
            let want_rna = as_f32(away);
            let want_rn = as_f32(even);
            let want_rz = as_f32(fl);
            assert_eq!(
                f32_to_tf32(x, Tf32Rounding::NearestAway, false, false),
                want_rna,
                "{x:#x}"
            );
            assert_eq!(
                f32_to_tf32(x, Tf32Rounding::NearestEven, false, false),
                want_rn,
                "{x:#x}"
            );
            assert_eq!(
                f32_to_tf32(x, Tf32Rounding::Zero, false, false),
                want_rz,
                "{x:#x}"
            );
        }
    }
}
