//! Half-precision (`.f16`, `.f16x2`) and bfloat16 (`.bf16`, `.bf16x2`) arithmetic
//! (ISA §9.7.4). Every operation is computed exactly and rounded once with
//! [`super::exact`]; `.x2` forms apply the scalar operation to both 16-bit halves.

use super::exact::{self, Format, Rounding, Unpacked};

/// Which 16-bit format a half operation works in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfKind {
    F16,
    Bf16,
}

impl HalfKind {
    #[inline]
    pub fn format(self) -> Format {
        match self {
            HalfKind::F16 => Format::F16,
            HalfKind::Bf16 => Format::BF16,
        }
    }
}

/// `.ftz` on a 16-bit value.
#[inline]
pub fn flush16(x: u16, k: HalfKind, ftz: bool) -> u16 {
    let frac_mask = (1u16 << k.format().frac_bits) - 1;
    let exp_mask = 0x7FFF & !frac_mask;
    if ftz && x & exp_mask == 0 {
        x & 0x8000
    } else {
        x
    }
}

fn is_nan16(x: u16, k: HalfKind) -> bool {
    matches!(exact::unpack(x as u64, k.format()), Unpacked::Nan)
}

fn finish16(r: u64, k: HalfKind, ftz: bool, sat: bool) -> u16 {
    let r = flush16(r as u16, k, ftz);
    if !sat {
        return r;
    }
    let one = exact::convert(
        1.0f32.to_bits() as u64,
        Format::F32,
        k.format(),
        Rounding::NearestEven,
    ) as u16;
    match exact::unpack(r as u64, k.format()) {
        Unpacked::Nan | Unpacked::Zero { .. } => 0,
        u if u.is_negative() => 0,
        Unpacked::Inf { .. } => one,
        _ => r.min(one),
    }
}

/// The binary operations on 16-bit floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfOp {
    Add,
    Sub,
    Mul,
}

/// `add/sub/mul{.rnd}{.ftz}{.sat}.f16` and `.bf16`.
pub fn binary16(
    op: HalfOp,
    a: u16,
    b: u16,
    k: HalfKind,
    rnd: Rounding,
    ftz: bool,
    sat: bool,
) -> u16 {
    let (a, b) = (flush16(a, k, ftz) as u64, flush16(b, k, ftz) as u64);
    let f = k.format();
    let r = match op {
        HalfOp::Add => exact::add(a, b, f, rnd),
        HalfOp::Sub => exact::add(a, b ^ 0x8000, f, rnd),
        HalfOp::Mul => exact::mul(a, b, f, rnd),
    };
    finish16(r, k, ftz, sat)
}

/// `fma.rnd{.ftz}{.sat}.f16` and `.bf16`.
pub fn fma16(a: u16, b: u16, c: u16, k: HalfKind, rnd: Rounding, ftz: bool, sat: bool) -> u16 {
    let fl = |x| flush16(x, k, ftz) as u64;
    finish16(
        exact::fma(fl(a), fl(b), fl(c), k.format(), rnd),
        k,
        ftz,
        sat,
    )
}

/// `min/max{.ftz}{.NaN}.f16`: NaN rules as for f32.
pub fn minmax16(
    a: u16,
    b: u16,
    k: HalfKind,
    ftz: bool,
    propagate_nan: bool,
    want_max: bool,
) -> u16 {
    let (a, b) = (flush16(a, k, ftz), flush16(b, k, ftz));
    let nan = k.format().canonical_nan() as u16;
    match (is_nan16(a, k), is_nan16(b, k)) {
        (true, true) => return nan,
        (true, false) => return if propagate_nan { nan } else { b },
        (false, true) => return if propagate_nan { nan } else { a },
        _ => {}
    }
    let key = |x: u16| -> i32 {
        // Sign-magnitude to an ordered integer; −0 sorts below +0.
        if x & 0x8000 != 0 {
            -((x & 0x7FFF) as i32) - 1
        } else {
            x as i32
        }
    };
    let a_less = key(a) < key(b);
    if a_less != want_max {
        a
    } else {
        b
    }
}

/// Applies a 16-bit operation to both halves of a packed pair.
#[inline]
pub fn x2(a: u32, b: u32, f: impl Fn(u16, u16) -> u16) -> u32 {
    let lo = f(a as u16, b as u16) as u32;
    let hi = f((a >> 16) as u16, (b >> 16) as u16) as u32;
    lo | (hi << 16)
}

/// Half to single precision (exact).
pub fn to_f32(x: u16, k: HalfKind) -> f32 {
    f32::from_bits(exact::convert(x as u64, k.format(), Format::F32, Rounding::NearestEven) as u32)
}

/// Single precision to half with `rnd`.
pub fn from_f32(x: f32, k: HalfKind, rnd: Rounding) -> u16 {
    exact::convert(x.to_bits() as u64, Format::F32, k.format(), rnd) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    const H: HalfKind = HalfKind::F16;
    const RN: Rounding = Rounding::NearestEven;

    #[test]
    fn f16_arithmetic() {
        let one = 0x3C00;
        let two = 0x4000;
        assert_eq!(binary16(HalfOp::Add, one, one, H, RN, false, false), two);
        assert_eq!(binary16(HalfOp::Sub, one, one, H, RN, false, false), 0);
        assert_eq!(
            binary16(HalfOp::Mul, 0x7BFF, two, H, RN, false, false),
            0x7C00
        );
        assert_eq!(
            binary16(HalfOp::Mul, 0x7BFF, two, H, Rounding::Zero, false, false),
            0x7BFF
        );
        assert_eq!(binary16(HalfOp::Add, 0x0001, 0, H, RN, true, false), 0);
        assert_eq!(binary16(HalfOp::Add, 0x0001, 0, H, RN, false, false), 1);
        assert_eq!(binary16(HalfOp::Add, one, two, H, RN, false, true), one);
        assert_eq!(
            binary16(HalfOp::Mul, 0x7C00, 0, H, RN, false, false),
            0x7FFF
        );
        assert_eq!(binary16(HalfOp::Mul, 0x7C00, 0, H, RN, false, true), 0);
        assert_eq!(fma16(one, one, 0x1400, H, RN, false, false), 0x3C01);
        // (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20: exactly half an ulp above 2^-9, a tie to even.
        assert_eq!(fma16(0x3C01, 0x3C01, 0xBC00, H, RN, false, false), 0x1800);
        assert_eq!(
            fma16(0x3C01, 0x3C01, 0xBC00, H, Rounding::Up, false, false),
            0x1801
        );
        // 1 + 2^-11 + 2^-21: just past the tie, so nearest rounds up.
        assert_eq!(fma16(0x1001, 0x3C00, 0x3C00, H, RN, false, false), 0x3C01);
    }

    #[test]
    fn f16_min_max_and_pairs() {
        assert_eq!(minmax16(0x7E00, 0x3C00, H, false, false, false), 0x3C00);
        assert_eq!(minmax16(0x8000, 0x0000, H, false, false, false), 0x8000);
        assert_eq!(minmax16(0xBC00, 0x3C00, H, false, false, true), 0x3C00);
        assert_eq!(minmax16(0xBC00, 0xC000, H, false, false, false), 0xC000);
        let r = x2(0x4000_3C00, 0x3C00_3C00, |a, b| {
            binary16(HalfOp::Add, a, b, H, RN, false, false)
        });
        assert_eq!(r, 0x4200_4000);
    }

    #[test]
    fn conversions() {
        assert_eq!(to_f32(0x3555, H), 0.33325195);
        assert_eq!(from_f32(1.0 / 3.0, H, RN), 0x3555);
        assert_eq!(from_f32(1.0 / 3.0, H, Rounding::Up), 0x3556);
        assert_eq!(from_f32(3.0, HalfKind::Bf16, RN), 0x4040);
        assert_eq!(to_f32(0x4040, HalfKind::Bf16), 3.0);
        assert_eq!(from_f32(1.0 + 2f32.powi(-8), HalfKind::Bf16, RN), 0x3F80);
        assert_eq!(
            from_f32(1.0 + 3.0 * 2f32.powi(-8), HalfKind::Bf16, RN),
            0x3F82
        );
    }
}
