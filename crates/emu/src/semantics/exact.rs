//! Exact binary floating-point arithmetic with one final rounding, in any IEEE 754 binary
//! format and any of the four PTX rounding modes.
//!
//! Every operation first computes the exact result as an integer significand times a power
//! of two (`u128` is wide enough: a 53×53-bit product needs 106 bits), and only then rounds
//! once into the destination format. Where an exact result would not fit (a sum of operands
//! whose exponents are far apart, a quotient, a square root), the bits that fall off are
//! *jammed* into the least significant bit; since the kept significand is always at least
//! 64 bits wide, far more than the 53 bits any destination keeps plus a guard and a round
//! bit, the jammed bit decides only "exactly on a boundary" versus "just past it", which is
//! what correct directed rounding needs.
//!
//! This is the slow, obviously-correct path: the emulator uses the host's IEEE hardware for
//! round-to-nearest-even (which it computes exactly), and this module for `.rz`, `.rm`,
//! `.rp`, for conversions between formats, and as the independent reference in tests.

/// An IEEE 754 rounding direction (PTX `.rn`, `.rz`, `.rm`, `.rp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Round to nearest, ties to even (`.rn`, the default).
    NearestEven,
    /// Round toward zero (`.rz`).
    Zero,
    /// Round toward negative infinity (`.rm`).
    Down,
    /// Round toward positive infinity (`.rp`).
    Up,
}

/// A binary interchange format: fraction bits (without the hidden bit) and exponent bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub frac_bits: u32,
    pub exp_bits: u32,
}

impl Format {
    pub const F16: Format = Format {
        frac_bits: 10,
        exp_bits: 5,
    };
    pub const BF16: Format = Format {
        frac_bits: 7,
        exp_bits: 8,
    };
    pub const F32: Format = Format {
        frac_bits: 23,
        exp_bits: 8,
    };
    pub const F64: Format = Format {
        frac_bits: 52,
        exp_bits: 11,
    };

    #[inline]
    const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    #[inline]
    const fn max_biased(self) -> u64 {
        (1 << self.exp_bits) - 1
    }
    #[inline]
    const fn sign_bit(self) -> u64 {
        1 << (self.frac_bits + self.exp_bits)
    }
    /// The canonical quiet NaN that NVIDIA GPUs produce (all fraction bits set, sign clear).
    pub const fn canonical_nan(self) -> u64 {
        (self.max_biased() << self.frac_bits) | ((1 << self.frac_bits) - 1)
    }
    pub const fn infinity(self, negative: bool) -> u64 {
        let s = if negative { self.sign_bit() } else { 0 };
        s | (self.max_biased() << self.frac_bits)
    }
    pub const fn max_finite(self, negative: bool) -> u64 {
        self.infinity(negative) - 1
    }
    pub const fn zero(self, negative: bool) -> u64 {
        if negative {
            self.sign_bit()
        } else {
            0
        }
    }
}

/// A decoded floating-point value. Finite nonzero values are `mant · 2^exp` exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unpacked {
    Nan,
    Inf { neg: bool },
    Zero { neg: bool },
    Finite { neg: bool, mant: u64, exp: i32 },
}

impl Unpacked {
    pub fn is_negative(self) -> bool {
        match self {
            Unpacked::Nan => false,
            Unpacked::Inf { neg } | Unpacked::Zero { neg } | Unpacked::Finite { neg, .. } => neg,
        }
    }
}

/// Decodes `bits` (low bits of the word) in `fmt`.
pub fn unpack(bits: u64, fmt: Format) -> Unpacked {
    let neg = bits & fmt.sign_bit() != 0;
    let biased = (bits >> fmt.frac_bits) & fmt.max_biased();
    let frac = bits & ((1u64 << fmt.frac_bits) - 1);
    let min_exp = 1 - fmt.bias() - fmt.frac_bits as i32;
    if biased == fmt.max_biased() {
        if frac == 0 {
            Unpacked::Inf { neg }
        } else {
            Unpacked::Nan
        }
    } else if biased == 0 {
        if frac == 0 {
            Unpacked::Zero { neg }
        } else {
            Unpacked::Finite {
                neg,
                mant: frac,
                exp: min_exp,
            }
        }
    } else {
        Unpacked::Finite {
            neg,
            mant: frac | (1 << fmt.frac_bits),
            exp: min_exp + biased as i32 - 1,
        }
    }
}

/// Rounds `(-1)^neg · mant · 2^exp` into `fmt` with `mode`. `mant` may carry a jammed
/// sticky bit in its LSB provided it has at least 64 significant bits (see module docs).
/// A zero `mant` gives a zero of sign `neg`.
pub fn round_pack(neg: bool, mant: u128, exp: i32, fmt: Format, mode: Rounding) -> u64 {
    if mant == 0 {
        return fmt.zero(neg);
    }
    let lz = mant.leading_zeros();
    let m = mant << lz;
    // value = m · 2^e with m's top bit at position 127, so the value's binade is 2^top.
    let e = exp as i64 - lz as i64;
    let top = e + 127;
    let emin = 1 - fmt.bias() as i64;
    let ulp_exp = (top - fmt.frac_bits as i64).max(emin - fmt.frac_bits as i64);
    let shift = ulp_exp - e; // bits of m below the unit in the last place; always ≥ 75
    let (mut kept, rem_nonzero, cmp_half) = if shift >= 129 {
        (0u128, true, std::cmp::Ordering::Less)
    } else if shift == 128 {
        let half = 1u128 << 127;
        (0u128, true, m.cmp(&half))
    } else {
        let s = shift as u32;
        let rem = m & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        (m >> s, rem != 0, rem.cmp(&half))
    };
    let up = match mode {
        Rounding::NearestEven => match cmp_half {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => kept & 1 == 1,
            std::cmp::Ordering::Less => false,
        },
        Rounding::Zero => false,
        Rounding::Up => rem_nonzero && !neg,
        Rounding::Down => rem_nonzero && neg,
    };
    let mut ulp_exp = ulp_exp;
    if up {
        kept += 1;
        if kept >> (fmt.frac_bits + 1) != 0 {
            kept >>= 1;
            ulp_exp += 1;
        }
    }
    if kept == 0 {
        return fmt.zero(neg);
    }
    let hidden = 1u128 << fmt.frac_bits;
    let (biased, frac) = if kept < hidden {
        (0i64, kept as u64)
    } else {
        (
            ulp_exp + fmt.frac_bits as i64 + fmt.bias() as i64,
            (kept - hidden) as u64,
        )
    };
    if biased >= fmt.max_biased() as i64 {
        return overflow(neg, fmt, mode);
    }
    fmt.zero(neg) | ((biased as u64) << fmt.frac_bits) | frac
}

/// The result of a finite value too large for `fmt`, per rounding direction.
fn overflow(neg: bool, fmt: Format, mode: Rounding) -> u64 {
    let to_inf = match mode {
        Rounding::NearestEven => true,
        Rounding::Zero => false,
        Rounding::Up => !neg,
        Rounding::Down => neg,
    };
    if to_inf {
        fmt.infinity(neg)
    } else {
        fmt.max_finite(neg)
    }
}

/// The exact sign of a zero sum `x + y` (x, y not both zero, or both zero of unlike sign):
/// +0 except when rounding down.
fn zero_sum_sign(mode: Rounding) -> bool {
    mode == Rounding::Down
}

/// Shifts right by `d`, jamming every bit shifted out into the LSB.
#[inline]
fn shr_jam(m: u128, d: u32) -> u128 {
    if d == 0 {
        m
    } else if d >= 128 {
        (m != 0) as u128
    } else {
        (m >> d) | ((m & ((1u128 << d) - 1)) != 0) as u128
    }
}

/// Exact (jammed) sum of two signed values `ma·2^ea` and `mb·2^eb` (nonzero significands).
/// Returns `None` for an exact zero.
fn add_signed(
    na: bool,
    ma: u128,
    ea: i32,
    nb: bool,
    mb: u128,
    eb: i32,
) -> Option<(bool, u128, i32)> {
    // Normalize both so the top bit is at 125, leaving two bits of headroom for the carry.
    let la = ma.leading_zeros() as i32 - 2;
    let lb = mb.leading_zeros() as i32 - 2;
    let (ma, ea) = (ma << la, ea - la);
    let (mb, eb) = (mb << lb, eb - lb);
    let ((n1, m1, e1), (n2, m2, e2)) = if (ea, ma) >= (eb, mb) {
        ((na, ma, ea), (nb, mb, eb))
    } else {
        ((nb, mb, eb), (na, ma, ea))
    };
    let d = (e1 - e2).min(200) as u32;
    let m2 = shr_jam(m2, d);
    if n1 == n2 {
        Some((n1, m1 + m2, e1))
    } else {
        let diff = m1 - m2;
        if diff == 0 {
            None
        } else {
            Some((n1, diff, e1))
        }
    }
}

/// `a + b` in `fmt`, correctly rounded with `mode`. Operands and result are bit patterns.
pub fn add(a: u64, b: u64, fmt: Format, mode: Rounding) -> u64 {
    use Unpacked::*;
    match (unpack(a, fmt), unpack(b, fmt)) {
        (Nan, _) | (_, Nan) => fmt.canonical_nan(),
        (Inf { neg: x }, Inf { neg: y }) => {
            if x == y {
                fmt.infinity(x)
            } else {
                fmt.canonical_nan()
            }
        }
        (Inf { neg }, _) | (_, Inf { neg }) => fmt.infinity(neg),
        (Zero { neg: x }, Zero { neg: y }) => {
            if x == y {
                fmt.zero(x)
            } else {
                fmt.zero(zero_sum_sign(mode))
            }
        }
        (Zero { .. }, Finite { neg, mant, exp }) | (Finite { neg, mant, exp }, Zero { .. }) => {
            round_pack(neg, mant as u128, exp, fmt, mode)
        }
        (
            Finite {
                neg: na,
                mant: ma,
                exp: ea,
            },
            Finite {
                neg: nb,
                mant: mb,
                exp: eb,
            },
        ) => match add_signed(na, ma as u128, ea, nb, mb as u128, eb) {
            Some((n, m, e)) => round_pack(n, m, e, fmt, mode),
            None => fmt.zero(zero_sum_sign(mode)),
        },
    }
}

/// `a · b` in `fmt`, correctly rounded.
pub fn mul(a: u64, b: u64, fmt: Format, mode: Rounding) -> u64 {
    use Unpacked::*;
    let (ua, ub) = (unpack(a, fmt), unpack(b, fmt));
    let neg = ua.is_negative() ^ ub.is_negative();
    match (ua, ub) {
        (Nan, _) | (_, Nan) => fmt.canonical_nan(),
        (Inf { .. }, Zero { .. }) | (Zero { .. }, Inf { .. }) => fmt.canonical_nan(),
        (Inf { .. }, _) | (_, Inf { .. }) => fmt.infinity(neg),
        (Zero { .. }, _) | (_, Zero { .. }) => fmt.zero(neg),
        (
            Finite {
                mant: ma, exp: ea, ..
            },
            Finite {
                mant: mb, exp: eb, ..
            },
        ) => round_pack(neg, ma as u128 * mb as u128, ea + eb, fmt, mode),
    }
}

/// `a · b + c` in `fmt` with a single rounding.
pub fn fma(a: u64, b: u64, c: u64, fmt: Format, mode: Rounding) -> u64 {
    use Unpacked::*;
    let (ua, ub, uc) = (unpack(a, fmt), unpack(b, fmt), unpack(c, fmt));
    let pneg = ua.is_negative() ^ ub.is_negative();
    match (ua, ub, uc) {
        (Nan, _, _) | (_, Nan, _) | (_, _, Nan) => fmt.canonical_nan(),
        (Inf { .. }, Zero { .. }, _) | (Zero { .. }, Inf { .. }, _) => fmt.canonical_nan(),
        (Inf { .. }, _, Inf { neg }) | (_, Inf { .. }, Inf { neg }) => {
            if neg == pneg {
                fmt.infinity(neg)
            } else {
                fmt.canonical_nan()
            }
        }
        (Inf { .. }, _, _) | (_, Inf { .. }, _) => fmt.infinity(pneg),
        (_, _, Inf { neg }) => fmt.infinity(neg),
        (Zero { .. }, _, Zero { neg }) | (_, Zero { .. }, Zero { neg }) => {
            if neg == pneg {
                fmt.zero(neg)
            } else {
                fmt.zero(zero_sum_sign(mode))
            }
        }
        (Zero { .. }, _, Finite { neg, mant, exp })
        | (_, Zero { .. }, Finite { neg, mant, exp }) => {
            round_pack(neg, mant as u128, exp, fmt, mode)
        }
        (
            Finite {
                mant: ma, exp: ea, ..
            },
            Finite {
                mant: mb, exp: eb, ..
            },
            Zero { .. },
        ) => round_pack(pneg, ma as u128 * mb as u128, ea + eb, fmt, mode),
        (
            Finite {
                mant: ma, exp: ea, ..
            },
            Finite {
                mant: mb, exp: eb, ..
            },
            Finite {
                neg: nc,
                mant: mc,
                exp: ec,
            },
        ) => match add_signed(pneg, ma as u128 * mb as u128, ea + eb, nc, mc as u128, ec) {
            Some((n, m, e)) => round_pack(n, m, e, fmt, mode),
            None => fmt.zero(zero_sum_sign(mode)),
        },
    }
}

/// `a / b` in `fmt`, correctly rounded.
pub fn div(a: u64, b: u64, fmt: Format, mode: Rounding) -> u64 {
    use Unpacked::*;
    let (ua, ub) = (unpack(a, fmt), unpack(b, fmt));
    let neg = ua.is_negative() ^ ub.is_negative();
    match (ua, ub) {
        (Nan, _) | (_, Nan) => fmt.canonical_nan(),
        (Inf { .. }, Inf { .. }) | (Zero { .. }, Zero { .. }) => fmt.canonical_nan(),
        (Inf { .. }, _) | (_, Zero { .. }) => fmt.infinity(neg),
        (_, Inf { .. }) | (Zero { .. }, _) => fmt.zero(neg),
        (
            Finite {
                mant: ma, exp: ea, ..
            },
            Finite {
                mant: mb, exp: eb, ..
            },
        ) => {
            // Normalize both significands to 64 bits so the quotient has ≥ 63 bits.
            let la = ma.leading_zeros();
            let lb = mb.leading_zeros();
            let na = (ma as u128) << (la + 63); // top bit at 126
            let nb = (mb << lb) as u128; // top bit at 63
            let q = na / nb;
            let r = na % nb;
            let mant = (q << 1) | (r != 0) as u128;
            let exp = ea - la as i32 - 63 - (eb - lb as i32) - 1;
            round_pack(neg, mant, exp, fmt, mode)
        }
    }
}

/// `√a` in `fmt`, correctly rounded; `√-0 = -0`, negative operands give NaN.
pub fn sqrt(a: u64, fmt: Format, mode: Rounding) -> u64 {
    use Unpacked::*;
    match unpack(a, fmt) {
        Nan => fmt.canonical_nan(),
        Zero { neg } => fmt.zero(neg),
        Inf { neg: false } => fmt.infinity(false),
        Inf { neg: true } | Finite { neg: true, .. } => fmt.canonical_nan(),
        Finite {
            neg: false,
            mant,
            exp,
        } => {
            // Shift the significand so its top bit is at 125 or 126 with an even exponent.
            let mut shift = mant.leading_zeros() as i32 + 62;
            if (exp - shift) % 2 != 0 {
                shift -= 1;
            }
            let m = (mant as u128) << shift;
            let (s, rem) = isqrt(m);
            let mant = (s << 1) | (rem != 0) as u128;
            round_pack(false, mant, (exp - shift) / 2 - 1, fmt, mode)
        }
    }
}

/// Integer square root with remainder: `(s, n - s²)` with `s = ⌊√n⌋`.
fn isqrt(n: u128) -> (u128, u128) {
    // Digit-by-digit method, two bits per step.
    let mut rem = n;
    let mut root = 0u128;
    let mut bit = 1u128 << 126;
    while bit > n {
        bit >>= 2;
    }
    while bit != 0 {
        if rem >= root + bit {
            rem -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    (root, rem)
}

/// Converts between formats with `mode` (NaN becomes the destination's canonical NaN).
pub fn convert(bits: u64, from: Format, to: Format, mode: Rounding) -> u64 {
    match unpack(bits, from) {
        Unpacked::Nan => to.canonical_nan(),
        Unpacked::Inf { neg } => to.infinity(neg),
        Unpacked::Zero { neg } => to.zero(neg),
        Unpacked::Finite { neg, mant, exp } => round_pack(neg, mant as u128, exp, to, mode),
    }
}

/// An integer (`neg`, magnitude) to `fmt`.
pub fn from_int(neg: bool, magnitude: u64, fmt: Format, mode: Rounding) -> u64 {
    round_pack(neg, magnitude as u128, 0, fmt, mode)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*) for randomized cross-checks.
    pub struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// Random f64 bits biased toward interesting values (near-equal exponents,
        /// subnormals, extremes).
        pub fn f64_bits(&mut self) -> u64 {
            let r = self.next();
            match r % 8 {
                0 => r >> 12 | (r & (1 << 63)),                   // subnormal-ish
                1 => (r & 0x800F_FFFF_FFFF_FFFF) | (0x3FF << 52), // [1,2)
                2 => (r & 0x800F_FFFF_FFFF_FFFF) | (0x7FE << 52), // huge
                3 => (r & 0x800F_FFFF_FFFF_FFFF) | (0x001 << 52), // tiny normal
                _ => r,
            }
        }
        pub fn f32_bits(&mut self) -> u32 {
            let r = self.next() as u32;
            match (r >> 29) & 7 {
                0 => r & 0x807F_FFFF,
                1 => (r & 0x807F_FFFF) | (127 << 23),
                2 => (r & 0x807F_FFFF) | (254 << 23),
                3 => (r & 0x807F_FFFF) | (1 << 23),
                _ => r,
            }
        }
    }

    fn same64(x: u64, y: f64) -> bool {
        let y = y.to_bits();
        x == y || (f64::from_bits(x).is_nan() && f64::from_bits(y).is_nan())
    }
    fn same32(x: u64, y: f32) -> bool {
        let y = y.to_bits() as u64;
        x == y || (f32::from_bits(x as u32).is_nan() && f32::from_bits(y as u32).is_nan())
    }

    #[test]
    fn nearest_even_matches_host_ieee_f64() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let f = Format::F64;
        let rn = Rounding::NearestEven;
        for _ in 0..200_000 {
            let (a, b, c) = (rng.f64_bits(), rng.f64_bits(), rng.f64_bits());
            let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
            assert!(same64(add(a, b, f, rn), x + y), "{x:e} + {y:e}");
            assert!(same64(mul(a, b, f, rn), x * y), "{x:e} * {y:e}");
            assert!(same64(div(a, b, f, rn), x / y), "{x:e} / {y:e}");
            assert!(same64(sqrt(a, f, rn), x.sqrt()), "sqrt {x:e}");
            assert!(
                same64(fma(a, b, c, f, rn), x.mul_add(y, z)),
                "fma {x:e} {y:e} {z:e}"
            );
        }
    }

    #[test]
    fn nearest_even_matches_host_ieee_f32() {
        let mut rng = Rng(0xfeed_beef_0bad_cafe);
        let f = Format::F32;
        let rn = Rounding::NearestEven;
        for _ in 0..200_000 {
            let (a, b, c) = (rng.f32_bits(), rng.f32_bits(), rng.f32_bits());
            let (x, y, z) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
            let (a, b, c) = (a as u64, b as u64, c as u64);
            assert!(same32(add(a, b, f, rn), x + y), "{x:e} + {y:e}");
            assert!(same32(mul(a, b, f, rn), x * y));
            assert!(same32(div(a, b, f, rn), x / y));
            assert!(same32(sqrt(a, f, rn), x.sqrt()));
            assert!(same32(fma(a, b, c, f, rn), x.mul_add(y, z)));
            let wide = f64::from_bits(rng.f64_bits());
            assert!(
                same32(convert(wide.to_bits(), Format::F64, f, rn), wide as f32),
                "{wide:e}"
            );
        }
    }

    #[test]
    fn directed_rounding_known_values() {
        let f = Format::F32;
        let one = 1.0f32.to_bits() as u64;
        let three = 3.0f32.to_bits() as u64;
        let q = |m| f32::from_bits(div(one, three, f, m) as u32);
        assert_eq!(q(Rounding::Zero).to_bits(), 0x3EAA_AAAA);
        assert_eq!(q(Rounding::Down).to_bits(), 0x3EAA_AAAA);
        assert_eq!(q(Rounding::Up).to_bits(), 0x3EAA_AAAB);
        assert_eq!(q(Rounding::NearestEven).to_bits(), 0x3EAA_AAAB);
        let mone = (-1.0f32).to_bits() as u64;
        let nq = |m| div(mone, three, f, m) as u32;
        assert_eq!(nq(Rounding::Zero), 0xBEAA_AAAA);
        assert_eq!(nq(Rounding::Down), 0xBEAA_AAAB);
        assert_eq!(nq(Rounding::Up), 0xBEAA_AAAA);
        // Overflow: MAX + MAX.
        let max = f32::MAX.to_bits() as u64;
        assert_eq!(add(max, max, f, Rounding::Zero), max);
        assert_eq!(add(max, max, f, Rounding::Down), max);
        assert_eq!(add(max, max, f, Rounding::Up), f.infinity(false));
        // x - x is +0, except -0 when rounding down.
        assert_eq!(add(one, mone, f, Rounding::Down), f.zero(true));
        assert_eq!(add(one, mone, f, Rounding::Up), 0);
        // Smallest subnormal: 2^-149 / 2 rounds to 0 or 2^-149 by direction.
        let tiny = 1u64;
        let two = 2.0f32.to_bits() as u64;
        assert_eq!(div(tiny, two, f, Rounding::Up), 1);
        assert_eq!(div(tiny, two, f, Rounding::Zero), 0);
        assert_eq!(div(tiny, two, f, Rounding::NearestEven), 0);
        // sqrt(2) in f64: RZ = 0x3FF6A09E667F3BCC, RP = ...BCD.
        let two64 = 2.0f64.to_bits();
        assert_eq!(
            sqrt(two64, Format::F64, Rounding::Zero),
            0x3FF6_A09E_667F_3BCC
        );
        assert_eq!(
            sqrt(two64, Format::F64, Rounding::Up),
            0x3FF6_A09E_667F_3BCD
        );
        // 2^24 + 1 to f32.
        assert_eq!(from_int(false, (1 << 24) + 1, f, Rounding::Up), 0x4B80_0001);
        assert_eq!(
            from_int(false, (1 << 24) + 1, f, Rounding::NearestEven),
            0x4B80_0000
        );
    }

    /// Directed results checked by an independent method: the error-free transformations
    /// (TwoSum, fma-based product/quotient/root residuals) on the host's round-to-nearest
    /// arithmetic give the exact sign of `exact − rn`, which fixes every directed result.
    #[test]
    fn directed_rounding_agrees_with_error_free_transformations_f64() {
        let mut rng = Rng(0x0ddb_a11c_afe0_0001);
        let f = Format::F64;
        for _ in 0..200_000 {
            let (a, b) = (rng.f64_bits(), rng.f64_bits());
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            if !x.is_finite() || !y.is_finite() {
                continue;
            }
            // add: TwoSum is exact whenever the sum does not overflow.
            let s = x + y;
            if s.is_finite() {
                let bb = s - x;
                let err = (x - (s - bb)) + (y - bb);
                check_directed(|m| add(a, b, f, m), s, err.partial_cmp(&0.0));
            }
            // mul: fma gives the exact residual when the product is far from underflow.
            let p = x * y;
            if p.is_finite() && p != 0.0 && p.abs() > 1e-290 {
                let err = x.mul_add(y, -p);
                check_directed(|m| mul(a, b, f, m), p, err.partial_cmp(&0.0));
            }
            // div: a − q·b is exact (for q not near under/overflow); its sign times b's sign
            // says where the exact quotient lies relative to q.
            let q = x / y;
            if q.is_finite() && q != 0.0 && q.abs() > 1e-290 && x.abs() > 1e-290 && y != 0.0 {
                let r = (-q).mul_add(y, x);
                let ord = if y > 0.0 {
                    r.partial_cmp(&0.0)
                } else {
                    0.0.partial_cmp(&r)
                };
                check_directed(|m| div(a, b, f, m), q, ord);
            }
            let xa = x.abs();
            if xa > 1e-290 {
                let r = xa.sqrt();
                let rem = (-r).mul_add(r, xa);
                check_directed(|m| sqrt(xa.to_bits(), f, m), r, rem.partial_cmp(&0.0));
            }
        }
    }

    fn check_directed(op: impl Fn(Rounding) -> u64, rn: f64, err: Option<std::cmp::Ordering>) {
        use std::cmp::Ordering::*;
        let err = err.expect("residual is a number");
        let up = if err == Greater { rn.next_up() } else { rn };
        let down = if err == Less { rn.next_down() } else { rn };
        let toward_zero = if rn > 0.0 { down } else { up };
        assert_eq!(op(Rounding::NearestEven), rn.to_bits(), "rn of {rn:e}");
        assert_eq!(
            f64::from_bits(op(Rounding::Up)),
            up,
            "rp of {rn:e} err {err:?}"
        );
        assert_eq!(
            f64::from_bits(op(Rounding::Down)),
            down,
            "rm of {rn:e} err {err:?}"
        );
        assert_eq!(
            f64::from_bits(op(Rounding::Zero)),
            toward_zero,
            "rz of {rn:e}"
        );
    }

    #[test]
    fn half_format_round_trip_and_known_values() {
        let h = Format::F16;
        // 1.0, 65504 (max), 2^-24 (min subnormal), 65520 rounds to inf.
        assert_eq!(
            convert(
                1.0f32.to_bits() as u64,
                Format::F32,
                h,
                Rounding::NearestEven
            ),
            0x3C00
        );
        assert_eq!(
            convert(
                65504f32.to_bits() as u64,
                Format::F32,
                h,
                Rounding::NearestEven
            ),
            0x7BFF
        );
        assert_eq!(
            convert(
                65520f32.to_bits() as u64,
                Format::F32,
                h,
                Rounding::NearestEven
            ),
            0x7C00
        );
        assert_eq!(
            convert(65520f32.to_bits() as u64, Format::F32, h, Rounding::Zero),
            0x7BFF
        );
        assert_eq!(
            convert(
                2f32.powi(-24).to_bits() as u64,
                Format::F32,
                h,
                Rounding::NearestEven
            ),
            1
        );
        for bits in 0..=0xFFFFu64 {
            let wide = convert(bits, h, Format::F32, Rounding::NearestEven);
            let back = convert(wide, Format::F32, h, Rounding::NearestEven);
            if f32::from_bits(wide as u32).is_nan() {
                assert_eq!(back, h.canonical_nan());
            } else {
                assert_eq!(back, bits);
            }
        }
    }
}
