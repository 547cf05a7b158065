//! Integer and bit-manipulation instructions (PTX ISA §9.7.1, §9.7.2, §9.7.8).
//!
//! Values travel as `u64` holding the operand's bits in the low `width` bits; results are
//! returned the same way, with bits above the width cleared. `IntType` says how the bits
//! are read. Where the ISA calls a result machine-specific (integer division by zero) the
//! function documents the value NVIDIA hardware produces.

use ir::op::{MulMode, PrmtMode};

/// The width and signedness of an integer operand (`.s32`, `.u64`, `.b16`…; `.b` reads as
/// unsigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntType {
    pub bits: u32,
    pub signed: bool,
}

impl IntType {
    pub const U8: IntType = IntType {
        bits: 8,
        signed: false,
    };
    pub const S8: IntType = IntType {
        bits: 8,
        signed: true,
    };
    pub const U16: IntType = IntType {
        bits: 16,
        signed: false,
    };
    pub const S16: IntType = IntType {
        bits: 16,
        signed: true,
    };
    pub const U32: IntType = IntType {
        bits: 32,
        signed: false,
    };
    pub const S32: IntType = IntType {
        bits: 32,
        signed: true,
    };
    pub const U64: IntType = IntType {
        bits: 64,
        signed: false,
    };
    pub const S64: IntType = IntType {
        bits: 64,
        signed: true,
    };

    #[inline(always)]
    pub fn mask(self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }
    /// Truncates to the width.
    #[inline(always)]
    pub fn wrap(self, x: u64) -> u64 {
        x & self.mask()
    }
    /// Reads the low `bits` as a signed value.
    #[inline(always)]
    pub fn sext(self, x: u64) -> i64 {
        let s = 64 - self.bits;
        ((x << s) as i64) >> s
    }
    /// The value as a mathematical integer.
    #[inline]
    pub fn value(self, x: u64) -> i128 {
        if self.signed {
            self.sext(x) as i128
        } else {
            (x & self.mask()) as i128
        }
    }
    pub fn min_value(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }
    pub fn max_value(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }
    /// Clamps a mathematical integer into range, returning its bits.
    #[inline]
    pub fn saturate(self, v: i128) -> u64 {
        self.wrap(v.clamp(self.min_value(), self.max_value()) as u64)
    }
}

/// `add{.sat}`: `.sat` (s32 only in PTX) clamps instead of wrapping.
#[inline(always)]
pub fn add(t: IntType, a: u64, b: u64, sat: bool) -> u64 {
    if sat {
        t.saturate(t.value(a) + t.value(b))
    } else {
        t.wrap(a.wrapping_add(b))
    }
}

/// `sub{.sat}`.
#[inline(always)]
pub fn sub(t: IntType, a: u64, b: u64, sat: bool) -> u64 {
    if sat {
        t.saturate(t.value(a) - t.value(b))
    } else {
        t.wrap(a.wrapping_sub(b))
    }
}

/// `add.cc` / `addc{.cc}`: `a + b + carry_in`, returning the sum and the carry out.
#[inline]
pub fn add_carry(t: IntType, a: u64, b: u64, carry_in: bool) -> (u64, bool) {
    let (a, b) = (t.wrap(a) as u128, t.wrap(b) as u128);
    let s = a + b + carry_in as u128;
    (t.wrap(s as u64), s >> t.bits != 0)
}

/// `sub.cc` / `subc{.cc}`: `a − (b + borrow_in)`, returning the difference and the borrow
/// out (the ISA's CC.CF for subtraction is a borrow).
#[inline]
pub fn sub_borrow(t: IntType, a: u64, b: u64, borrow_in: bool) -> (u64, bool) {
    let (a, b) = (t.wrap(a) as u128, t.wrap(b) as u128 + borrow_in as u128);
    (t.wrap(a.wrapping_sub(b) as u64), a < b)
}

/// The full product of two `t` values as a signed or unsigned 128-bit pattern.
#[inline]
fn full_product(t: IntType, a: u64, b: u64) -> u128 {
    if t.signed {
        (t.sext(a) as i128).wrapping_mul(t.sext(b) as i128) as u128
    } else {
        (t.wrap(a) as u128) * (t.wrap(b) as u128)
    }
}

/// `mul.lo/.hi/.wide`. `.wide` returns 2·width bits.
#[inline(always)]
pub fn mul(t: IntType, a: u64, b: u64, part: MulMode) -> u64 {
    match part {
        MulMode::Lo => t.wrap(a.wrapping_mul(b)),
        MulMode::Hi => t.wrap((full_product(t, a, b) >> t.bits) as u64),
        MulMode::Wide => {
            let p = full_product(t, a, b) as u64;
            if t.bits >= 32 {
                p
            } else {
                p & ((1u64 << (2 * t.bits)) - 1)
            }
        }
    }
}

/// `mad.lo/.hi/.wide{.sat}`: product part plus `c` (`c` is 2·width bits for `.wide`).
/// `.sat` exists only for `mad.hi.sat.s32`: the sum of the high half and `c` saturates.
pub fn mad(t: IntType, a: u64, b: u64, c: u64, part: MulMode, sat: bool) -> u64 {
    let p = mul(t, a, b, part);
    match part {
        MulMode::Wide => {
            let wt = IntType {
                bits: (2 * t.bits).min(64),
                signed: t.signed,
            };
            wt.wrap(p.wrapping_add(c))
        }
        _ if sat => {
            // ISA: mad.hi.sat.s32 saturates the 64-bit intermediate (a*b)>>32 + c.
            t.saturate(t.value(p) + t.value(c))
        }
        _ => t.wrap(p.wrapping_add(c)),
    }
}

/// `mad.cc` / `madc{.cc}` (32/64-bit, `.lo`/`.hi`): product part + c + carry in, with
/// carry out.
pub fn mad_carry(t: IntType, a: u64, b: u64, c: u64, part: MulMode, carry_in: bool) -> (u64, bool) {
    let p = mul(t, a, b, part);
    add_carry(t, p, c, carry_in)
}

/// `mul24.lo/.hi`: 24-bit operands (sign-extended from bit 23 for `.s32`) give a 48-bit
/// product; `.lo` keeps bits 0–31, `.hi` bits 16–47.
pub fn mul24(t: IntType, a: u64, b: u64, hi: bool) -> u64 {
    let p: i64 = if t.signed {
        let ext = |x: u64| (((x as u32) << 8) as i32 >> 8) as i64;
        ext(a) * ext(b)
    } else {
        ((a & 0xFF_FFFF) * (b & 0xFF_FFFF)) as i64
    };
    let r = if hi { (p >> 16) as u64 } else { p as u64 };
    r & 0xFFFF_FFFF
}

/// `mad24.lo/.hi`.
pub fn mad24(t: IntType, a: u64, b: u64, c: u64, hi: bool) -> u64 {
    (mul24(t, a, b, hi).wrapping_add(c)) & 0xFFFF_FFFF
}

/// `sad`: `c + |a − b|`.
pub fn sad(t: IntType, a: u64, b: u64, c: u64) -> u64 {
    let d = (t.value(a) - t.value(b)).unsigned_abs() as u64;
    t.wrap(c.wrapping_add(d))
}

/// `div`: truncating division. Division by zero (machine-specific in the ISA) gives all
/// ones, as NVIDIA hardware does for unsigned and signed alike; `MIN / −1` wraps to `MIN`.
#[inline]
pub fn div(t: IntType, a: u64, b: u64) -> u64 {
    let (va, vb) = (t.value(a), t.value(b));
    if vb == 0 {
        t.mask()
    } else {
        t.wrap((va / vb) as u64)
    }
}

/// `rem`: remainder with the dividend's sign. Remainder by zero gives the dividend
/// (machine-specific in the ISA); `MIN rem −1` is 0.
#[inline]
pub fn rem(t: IntType, a: u64, b: u64) -> u64 {
    let (va, vb) = (t.value(a), t.value(b));
    if vb == 0 {
        t.wrap(a)
    } else {
        t.wrap((va % vb) as u64)
    }
}

/// `min` (`max` when `want_max`).
#[inline(always)]
pub fn min_max(t: IntType, a: u64, b: u64, want_max: bool) -> u64 {
    // `t.value(a) < t.value(b)`, without 128-bit arithmetic (the hot path of `min`/`max`).
    let less = if t.signed {
        t.sext(a) < t.sext(b)
    } else {
        t.wrap(a) < t.wrap(b)
    };
    let r = if less != want_max { a } else { b };
    t.wrap(r)
}

/// `abs` (wrapping: `abs(MIN) = MIN`).
#[inline]
pub fn abs(t: IntType, a: u64) -> u64 {
    t.wrap(t.sext(a).wrapping_abs() as u64)
}

/// `neg`.
#[inline]
pub fn neg(t: IntType, a: u64) -> u64 {
    t.wrap(a.wrapping_neg())
}

/// `shl`: shift amounts ≥ the width give 0.
#[inline(always)]
pub fn shl(t: IntType, a: u64, amount: u32) -> u64 {
    if amount >= t.bits {
        0
    } else {
        t.wrap(a << amount)
    }
}

/// `shr`: logical for `.u`/`.b`, arithmetic for `.s`; amounts ≥ the width give 0 or the
/// sign fill.
#[inline(always)]
pub fn shr(t: IntType, a: u64, amount: u32) -> u64 {
    let amount = amount.min(t.bits - 1 + (!t.signed) as u32);
    if t.signed {
        t.wrap((t.sext(a) >> amount.min(63)) as u64)
    } else if amount >= t.bits {
        0
    } else {
        t.wrap(a) >> amount
    }
}

/// `bfe`: extract `len` bits at `pos` (each taken from the low 8 bits of its operand);
/// bits past the msb read as the sign bit (`.s`) or zero (`.u`); a zero length gives 0.
pub fn bfe(t: IntType, a: u64, pos: u32, len: u32) -> u64 {
    let (pos, len) = (pos & 0xFF, len & 0xFF);
    let msb = t.bits - 1;
    let a = t.wrap(a);
    let sbit = if !t.signed || len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(msb)) & 1
    };
    let mut d = 0u64;
    for i in 0..t.bits {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    d
}

/// `bfi`: insert the low `len` bits of `a` into `b` at `pos`; bits past the msb are
/// dropped.
pub fn bfi(t: IntType, a: u64, b: u64, pos: u32, len: u32) -> u64 {
    let (pos, len) = (pos & 0xFF, len & 0xFF);
    let mut f = t.wrap(b);
    for i in 0..len {
        if pos + i >= t.bits {
            break;
        }
        let bit = (a >> i) & 1;
        f = (f & !(1 << (pos + i))) | (bit << (pos + i));
    }
    f
}

/// `bfind{.shiftamt}`: bit index of the most significant 1 (`.u`) or most significant
/// non-sign bit (`.s`); 0xFFFFFFFF if there is none. `.shiftamt` returns the left shift
/// that would make that bit the msb.
pub fn bfind(t: IntType, a: u64, shiftamt: bool) -> u64 {
    let mut x = t.wrap(a);
    if t.signed && t.sext(a) < 0 {
        x = t.wrap(!x);
    }
    if x == 0 {
        return 0xFFFF_FFFF;
    }
    let pos = 63 - x.leading_zeros();
    (if shiftamt { t.bits - 1 - pos } else { pos }) as u64
}

/// `popc`.
#[inline]
pub fn popc(t: IntType, a: u64) -> u64 {
    t.wrap(a).count_ones() as u64
}

/// `clz`.
#[inline]
pub fn clz(t: IntType, a: u64) -> u64 {
    (t.wrap(a).leading_zeros() - (64 - t.bits)) as u64
}

/// `brev`.
#[inline]
pub fn brev(t: IntType, a: u64) -> u64 {
    a.reverse_bits() >> (64 - t.bits)
}

/// `prmt.b32{.mode} d, a, b, c`: bytes of `{b, a}` (a is bytes 0–3) picked by `c` (ISA
/// §9.7.8.7). In the generic form each selector nibble picks one of the 8 bytes and its bit
/// 3 replicates that byte's sign.
pub fn prmt(a: u32, b: u32, c: u32, mode: PrmtMode) -> u32 {
    let src = ((b as u64) << 32) | a as u64;
    let byte = |i: u32| ((src >> (8 * (i & 7))) & 0xFF) as u32;
    let s = c & 3;
    // Source byte indices for result bytes 0..3.
    let idx: [u32; 4] = match mode {
        PrmtMode::Generic => {
            let mut d = 0u32;
            for i in 0..4 {
                let sel = (c >> (4 * i)) & 0xF;
                let mut v = byte(sel & 7);
                if sel & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xFF } else { 0 };
                }
                d |= v << (8 * i);
            }
            return d;
        }
        PrmtMode::F4e => [s, s + 1, s + 2, s + 3],
        PrmtMode::B4e => [s, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7],
        PrmtMode::Rc8 => [s, s, s, s],
        PrmtMode::Ecl => [s, s.max(1), s.max(2), 3],
        PrmtMode::Ecr => [0, s.min(1), s.min(2), s],
        PrmtMode::Rc16 => {
            let lo = 2 * (s & 1);
            [lo, lo + 1, lo, lo + 1]
        }
    };
    idx.iter()
        .enumerate()
        .fold(0, |d, (i, &k)| d | (byte(k) << (8 * i)))
}

/// `lop3.b32 d, a, b, c, immLut`: each result bit is `immLut[4a + 2b + c]`.
#[inline]
pub fn lop3(a: u64, b: u64, c: u64, lut: u8) -> u64 {
    let mut d = 0;
    for i in 0..8u8 {
        if lut >> i & 1 == 1 {
            let ma = if i & 4 != 0 { a } else { !a };
            let mb = if i & 2 != 0 { b } else { !b };
            let mc = if i & 1 != 0 { c } else { !c };
            d |= ma & mb & mc;
        }
    }
    d
}

/// `dp4a.atype.btype`: `c` plus the four byte products.
pub fn dp4a(a: u32, a_signed: bool, b: u32, b_signed: bool, c: u32) -> u32 {
    let lane = |x: u32, i: u32, signed: bool| -> i32 {
        let v = (x >> (8 * i)) & 0xFF;
        if signed {
            v as u8 as i8 as i32
        } else {
            v as i32
        }
    };
    (0..4).fold(c, |acc, i| {
        acc.wrapping_add((lane(a, i, a_signed) * lane(b, i, b_signed)) as u32)
    })
}

/// `dp2a.lo/.hi.atype.btype`: two 16-bit lanes of `a` times bytes 0–1 (`.lo`) or 2–3
/// (`.hi`) of `b`, plus `c`.
pub fn dp2a(a: u32, a_signed: bool, b: u32, b_signed: bool, c: u32, hi: bool) -> u32 {
    let half = |i: u32| -> i32 {
        let v = (a >> (16 * i)) & 0xFFFF;
        if a_signed {
            v as u16 as i16 as i32
        } else {
            v as i32
        }
    };
    let byte = |i: u32| -> i32 {
        let v = (b >> (8 * i)) & 0xFF;
        if b_signed {
            v as u8 as i8 as i32
        } else {
            v as i32
        }
    };
    let base = if hi { 2 } else { 0 };
    (0..2).fold(c, |acc, i| {
        acc.wrapping_add((half(i) * byte(base + i)) as u32)
    })
}

/// `shf.l/.r.clamp/.wrap.b32 d, a, b, c`: funnel shift of the 64-bit `{b, a}` (b high);
/// `.wrap` uses `c & 31`, `.clamp` `min(c, 32)`.
pub fn shf(a: u32, b: u32, c: u32, left: bool, clamp: bool) -> u32 {
    let n = if clamp { c.min(32) } else { c & 31 };
    let v = ((b as u64) << 32) | a as u64;
    if left {
        ((v << n) >> 32) as u32
    } else {
        (v >> n) as u32
    }
}

/// `bmsk.clamp/.wrap.b32 d, a, b`: `b` one-bits starting at bit `a`.
pub fn bmsk(a: u32, b: u32, clamp: bool) -> u32 {
    let (pos, len) = if clamp {
        (a.min(32), b.min(32))
    } else {
        (a & 31, b & 31)
    };
    let ones = if len >= 32 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    ((ones << pos) & 0xFFFF_FFFF) as u32
}

/// `cnot`: 1 if `a` is zero, else 0.
#[inline]
pub fn cnot(t: IntType, a: u64) -> u64 {
    (t.wrap(a) == 0) as u64
}

/// `szext.mode.type d, a, b`: sign- or zero-extend `a` from its low `b` bits (b ≥ 32
/// keeps all; `.clamp` clamps b to 32, `.wrap` uses b mod 32).
pub fn szext(a: u32, b: u32, signed: bool, clamp: bool) -> u32 {
    let n = if clamp { b.min(32) } else { b & 31 };
    if n >= 32 {
        return a;
    }
    if n == 0 {
        return 0;
    }
    let s = 32 - n;
    if signed {
        (((a << s) as i32) >> s) as u32
    } else {
        (a << s) >> s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const U32: IntType = IntType::U32;
    const S32: IntType = IntType::S32;
    const U64: IntType = IntType::U64;
    const S64: IntType = IntType::S64;

    #[test]
    fn carries_chain_across_64_bit_words() {
        // 128-bit add of 0xFFFF..FF + 1 through add.cc/addc.
        let (lo, c) = add_carry(U64, u64::MAX, 1, false);
        let (hi, c2) = add_carry(U64, 0, 0, c);
        assert_eq!((lo, c, hi, c2), (0, true, 1, false));
        let (lo, b) = sub_borrow(U32, 0, 1, false);
        let (hi, b2) = sub_borrow(U32, 5, 0, b);
        assert_eq!((lo, b, hi, b2), (0xFFFF_FFFF, true, 4, false));
        let (s, c) = add_carry(U32, 0xFFFF_FFFF, 0xFFFF_FFFF, true);
        assert_eq!((s, c), (0xFFFF_FFFF, true));
        let (r, c) = mad_carry(U32, 0x1_0000, 0x1_0000, 5, MulMode::Lo, true);
        assert_eq!((r, c), (6, false));
        let (r, c) = mad_carry(
            U32,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            MulMode::Hi,
            true,
        );
        assert_eq!((r, c), (0xFFFF_FFFE, true));
    }

    #[test]
    fn saturating_add_sub() {
        assert_eq!(add(S32, 0x7FFF_FFFF, 1, true), 0x7FFF_FFFF);
        assert_eq!(add(S32, 0x7FFF_FFFF, 1, false), 0x8000_0000);
        assert_eq!(sub(S32, 0x8000_0000, 1, true), 0x8000_0000);
        assert_eq!(add(S32, 0xFFFF_FFFF, 0xFFFF_FFFF, true), 0xFFFF_FFFE);
    }

    #[test]
    fn multiply_parts() {
        assert_eq!(mul(U32, 0xFFFF_FFFF, 0xFFFF_FFFF, MulMode::Hi), 0xFFFF_FFFE);
        assert_eq!(mul(S32, 0xFFFF_FFFF, 0xFFFF_FFFF, MulMode::Hi), 0);
        assert_eq!(
            mul(S32, 0xFFFF_FFFF, 2, MulMode::Wide),
            0xFFFF_FFFF_FFFF_FFFE
        );
        assert_eq!(mul(U32, 0xFFFF_FFFF, 2, MulMode::Wide), 0x1_FFFF_FFFE);
        assert_eq!(
            mul(IntType::S16, 0xFFFF, 0x7FFF, MulMode::Wide),
            0xFFFF_8001
        );
        assert_eq!(mul(S64, u64::MAX, u64::MAX, MulMode::Hi), 0);
        assert_eq!(mul(U64, u64::MAX, u64::MAX, MulMode::Hi), u64::MAX - 1);
        assert_eq!(mul(S64, i64::MIN as u64, 2, MulMode::Hi), u64::MAX);
        assert_eq!(mad(S32, 3, 0xFFFF_FFFF, 10, MulMode::Wide, false), 7);
        assert_eq!(
            mad(
                S32,
                0x7FFF_FFFF,
                0x7FFF_FFFF,
                0x7FFF_FFFF,
                MulMode::Hi,
                true
            ),
            0x7FFF_FFFF
        );
        assert_eq!(mul24(S32, 0x00FF_FFFF, 2, false), 0xFFFF_FFFE);
        assert_eq!(mul24(U32, 0x00FF_FFFF, 0x00FF_FFFF, true), 0xFFFF_FE00);
        assert_eq!(mul24(U32, 0x01FF_FFFF, 1, false), 0x00FF_FFFF);
        assert_eq!(mad24(U32, 2, 3, 4, false), 10);
        assert_eq!(sad(S32, 0xFFFF_FFFE, 3, 1), 6);
        assert_eq!(sad(U32, 0xFFFF_FFFE, 3, 1), 0xFFFF_FFFC);
    }

    #[test]
    fn division_edge_cases() {
        assert_eq!(div(U32, 7, 0), 0xFFFF_FFFF);
        assert_eq!(div(S32, 7, 0), 0xFFFF_FFFF);
        assert_eq!(div(U64, 7, 0), u64::MAX);
        assert_eq!(rem(U32, 7, 0), 7);
        assert_eq!(rem(S32, (-7i32) as u32 as u64, 0), 0xFFFF_FFF9);
        assert_eq!(div(S32, 0x8000_0000, 0xFFFF_FFFF), 0x8000_0000);
        assert_eq!(rem(S32, 0x8000_0000, 0xFFFF_FFFF), 0);
        assert_eq!(div(S32, (-7i32) as u32 as u64, 2), (-3i32) as u32 as u64);
        assert_eq!(rem(S32, (-7i32) as u32 as u64, 2), (-1i32) as u32 as u64);
        assert_eq!(div(S64, i64::MIN as u64, u64::MAX), i64::MIN as u64);
        assert_eq!(div(IntType::U16, 0xFFFF, 2), 0x7FFF);
    }

    #[test]
    fn shifts_clamp_amounts_at_width() {
        assert_eq!(shl(U32, 1, 31), 0x8000_0000);
        assert_eq!(shl(U32, 1, 32), 0);
        assert_eq!(shl(U64, 1, 200), 0);
        assert_eq!(shr(U32, 0x8000_0000, 32), 0);
        assert_eq!(shr(S32, 0x8000_0000, 32), 0xFFFF_FFFF);
        assert_eq!(shr(S32, 0x8000_0000, u32::MAX), 0xFFFF_FFFF);
        assert_eq!(shr(S32, 0x4000_0000, 40), 0);
        assert_eq!(shr(S64, 1 << 63, 64), u64::MAX);
        assert_eq!(shr(IntType::S16, 0x8000, 4), 0xF800);
        assert_eq!(shr(U32, 0xF0, 4), 0xF);
    }

    #[test]
    fn bit_field_extract_and_insert() {
        assert_eq!(bfe(U32, 0xABCD_1234, 8, 8), 0x12);
        assert_eq!(bfe(S32, 0x0000_8000, 8, 8), 0xFFFF_FF80);
        assert_eq!(bfe(S32, 0x0000_8000, 0, 0), 0);
        assert_eq!(bfe(U32, 0xFFFF_FFFF, 40, 8), 0);
        assert_eq!(bfe(S32, 0x8000_0000, 40, 8), 0xFFFF_FFFF);
        assert_eq!(bfe(U32, 0xF000_0000, 28, 10), 0xF);
        assert_eq!(bfe(S32, 0xF000_0000, 28, 10), 0xFFFF_FFFF);
        assert_eq!(bfe(U32, 0x1234, 0x104, 0x204), 0x3); // only the low 8 bits count
        assert_eq!(bfe(S64, 1 << 63, 60, 4), 0xFFFF_FFFF_FFFF_FFF8);
        assert_eq!(bfe(S64, 1 << 63, 60, 8), 0xFFFF_FFFF_FFFF_FFF8);
        assert_eq!(bfi(U32, 0xF, 0, 4, 4), 0xF0);
        assert_eq!(bfi(U32, 0xFF, 0, 30, 8), 0xC000_0000);
        assert_eq!(bfi(U32, 0xFF, 0x1234, 0, 0), 0x1234);
    }

    #[test]
    fn bit_counting() {
        assert_eq!(bfind(U32, 0, false), 0xFFFF_FFFF);
        assert_eq!(bfind(U32, 0x10, false), 4);
        assert_eq!(bfind(U32, 0x10, true), 27);
        assert_eq!(bfind(S32, 0xFFFF_FFFF, false), 0xFFFF_FFFF);
        assert_eq!(bfind(S32, 0xFFFF_FFEF, false), 4);
        assert_eq!(bfind(U64, 1 << 40, false), 40);
        assert_eq!(popc(U64, u64::MAX), 64);
        assert_eq!(clz(U32, 0), 32);
        assert_eq!(clz(U32, 1), 31);
        assert_eq!(clz(U64, 1), 63);
        assert_eq!(brev(U32, 1), 0x8000_0000);
        assert_eq!(brev(U64, 1), 1 << 63);
        assert_eq!(cnot(U32, 0), 1);
        assert_eq!(cnot(U32, 5), 0);
    }

    #[test]
    fn prmt_modes() {
        let (a, b) = (0x3322_1100, 0x7766_5544);
        assert_eq!(prmt(a, b, 0x3210, PrmtMode::Generic), a);
        assert_eq!(prmt(a, b, 0x7654, PrmtMode::Generic), b);
        assert_eq!(prmt(a, b, 0x0123, PrmtMode::Generic), 0x0011_2233);
        assert_eq!(prmt(0x0000_8000, 0, 0x0009, PrmtMode::Generic), 0x0000_00FF);
        assert_eq!(prmt(a, b, 1, PrmtMode::F4e), 0x4433_2211);
        assert_eq!(prmt(a, b, 0, PrmtMode::B4e), 0x5566_7700);
        assert_eq!(prmt(a, b, 3, PrmtMode::B4e), 0x0011_2233);
        assert_eq!(prmt(a, b, 2, PrmtMode::Rc8), 0x2222_2222);
        assert_eq!(prmt(a, b, 1, PrmtMode::Ecl), 0x3322_1111);
        assert_eq!(prmt(a, b, 1, PrmtMode::Ecr), 0x1111_1100);
        assert_eq!(prmt(a, b, 1, PrmtMode::Rc16), 0x3322_3322);
    }

    #[test]
    fn lop3_dot_products_funnel_shifts() {
        let (a, b, c) = (0xF0F0, 0xCCCC, 0xAAAA);
        assert_eq!(lop3(a, b, c, 0xF0), a);
        assert_eq!(lop3(a, b, c, 0x96), a ^ b ^ c);
        assert_eq!(lop3(a, b, c, 0x80), a & b & c);
        assert_eq!(lop3(a, b, c, 0xFE), a | b | c);
        assert_eq!(dp4a(0x0102_0304, false, 0x0101_0101, false, 10), 20);
        assert_eq!(
            dp4a(0xFF00_0000, true, 0x0200_0000, true, 0),
            (-2i32) as u32
        );
        assert_eq!(dp4a(0xFF00_0000, false, 0x0200_0000, true, 0), 510);
        assert_eq!(dp2a(0xFFFF_0002, true, 0x0403_0201, false, 0, false), 0);
        assert_eq!(
            dp2a(0xFFFF_0002, true, 0x0403_0201, false, 0, true),
            2 * 3 - 4
        );
        assert_eq!(shf(0x8000_0000, 0x1, 1, true, false), 0x3);
        assert_eq!(shf(0x1, 0x1, 1, false, false), 0x8000_0000);
        assert_eq!(shf(0xAAAA, 0x5555, 32, false, true), 0x5555);
        assert_eq!(shf(0xAAAA, 0x5555, 32, false, false), 0xAAAA);
        assert_eq!(shf(0xAAAA, 0x5555, 40, true, true), 0xAAAA);
        assert_eq!(bmsk(4, 4, true), 0xF0);
        assert_eq!(bmsk(0, 32, true), 0xFFFF_FFFF);
        assert_eq!(szext(0x80, 8, true, true), 0xFFFF_FF80);
        assert_eq!(szext(0x180, 8, false, true), 0x80);
    }

    #[test]
    fn min_max_abs_neg() {
        assert_eq!(min_max(S32, 0xFFFF_FFFF, 1, false), 0xFFFF_FFFF);
        assert_eq!(min_max(U32, 0xFFFF_FFFF, 1, false), 1);
        assert_eq!(min_max(S64, 5, u64::MAX, true), 5);
        assert_eq!(abs(S32, 0x8000_0000), 0x8000_0000);
        assert_eq!(abs(S32, 0xFFFF_FFFB), 5);
        assert_eq!(neg(S32, 5), 0xFFFF_FFFB);
        assert_eq!(abs(IntType::S16, 0xFFFF), 1);
    }

    /// `min_max` compares in 64 bits: the same choice as comparing the operands' values
    /// as mathematical integers, for every width and signedness, at the edges of each
    /// range and with garbage above the width.
    #[test]
    fn min_max_agrees_with_the_values_compared_as_integers() {
        let edges = [
            0u64,
            1,
            0x7F,
            0x80,
            0xFF,
            0x7FFF,
            0x8000,
            0xFFFF,
            0x7FFF_FFFF,
            0x8000_0000,
            0xFFFF_FFFF,
            0x1_0000_0000,
            0xDEAD_BEEF_0000_0005,
            i64::MAX as u64,
            i64::MIN as u64,
            u64::MAX,
        ];
        for bits in [8, 16, 32, 64] {
            for signed in [false, true] {
                let t = IntType { bits, signed };
                for &a in &edges {
                    for &b in &edges {
                        for want_max in [false, true] {
                            let (va, vb) = (t.value(a), t.value(b));
                            let chosen = if (va < vb) != want_max { a } else { b };
                            assert_eq!(
                                min_max(t, a, b, want_max),
                                t.wrap(chosen),
                                "{t:?} {a:#x} {b:#x} max={want_max}"
                            );
                        }
                    }
                }
            }
        }
    }
}
