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
}
