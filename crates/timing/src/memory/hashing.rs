//! Index functions: which set of a cache, or which DRAM channel, an address goes to.
//!
//! Three functions, chosen per cache by `set_index` (and per GPU for DRAM channels by
//! `dram.channel_index`):
//!
//! - **linear**: the `n` address bits just above the line offset (`index = line mod sets`).
//!   Strides that are multiples of `sets x line_bytes` all land in one set.
//! - **xor**: the linear index with chosen higher address bits folded in: bit `i` of the
//!   index is XORed with address bit `bits[i]` (bits beyond the list are unchanged).
//!   Nugteren et al., "A Detailed GPU Cache Model Based on Reuse Distance Theory"
//!   (HPCA 2014), measured this shape on the Fermi L1D: set bits 0..4 are line-address
//!   bits 7..11 XORed with address bits 13, 14, 15, 17 and 19.
//! - **polynomial**: the line number read as a polynomial over GF(2), reduced modulo an
//!   irreducible polynomial `P` of degree `n`; the remainder's `n` bits are the index
//!   (Rau, "Pseudo-randomly interleaved memory", ISCA 1991: "IPOLY"). Every power-of-two
//!   stride visits all `2^n` sets before repeating. `P` is written as an integer whose
//!   bit `k` is the coefficient of `x^k` (`37` = `x^5 + x^2 + 1`).
//!
//! The functions are evaluated per access, so they avoid allocation and branches on data
//! beyond one loop over the set bits of the high part.

use crate::bits::BitRuns;
use serde::{Deserialize, Serialize};

/// A configured index function (`set_index = { function = "xor", bits = [...] }`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "function", rename_all = "snake_case", deny_unknown_fields)]
pub enum IndexFunction {
    /// `line mod sets`.
    #[default]
    Linear,
    /// Bit `i` of the linear index XORed with address bit `bits[i]` (byte address bits).
    Xor {
        /// Byte-address bit folded into each index bit, lowest index bit first.
        bits: Vec<u32>,
    },
    /// The line number modulo an irreducible polynomial over GF(2).
    Polynomial {
        /// The polynomial, bit `k` = coefficient of `x^k`; its degree must equal
        /// log2(number of sets).
        polynomial: u64,
    },
}

impl IndexFunction {
    /// Checks the function against an index of `index_bits` bits; the message says what
    /// is wrong.
    pub fn check(&self, index_bits: u32) -> Result<(), String> {
        match self {
            IndexFunction::Linear => Ok(()),
            IndexFunction::Xor { bits } => {
                if bits.len() > index_bits as usize {
                    return Err(format!(
                        "{} XOR bits for an index of {index_bits} bits",
                        bits.len()
                    ));
                }
                match bits.iter().find(|&&b| b >= 64) {
                    Some(b) => Err(format!("address bit {b} does not exist (0..63)")),
                    None => Ok(()),
                }
            }
            IndexFunction::Polynomial { polynomial } => {
                let degree = 63u32.saturating_sub(polynomial.leading_zeros());
                if *polynomial < 2 || degree != index_bits {
                    Err(format!(
                        "polynomial {polynomial} has degree {degree}; the index has \
                         {index_bits} bits"
                    ))
                } else if polynomial & 1 == 0 {
                    Err(format!(
                        "polynomial {polynomial} is divisible by x (not irreducible)"
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// An index function ready to evaluate for a fixed number of sets and line size.
#[derive(Clone, Debug)]
pub struct Indexer {
    kind: Kind,
    line_shift: u32,
    mask: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    Linear,
    /// The byte-address bits XORed into the index, moved to their index bits.
    Xor(BitRuns),
    /// `x^(n + i) mod P` for every bit `i` of the part above the index.
    Polynomial(Box<[u64; 64]>, u32),
}

impl Indexer {
    /// An index function over `sets` sets (a power of two) of `line_bytes`-byte lines.
    /// `f` must have passed [`IndexFunction::check`] for `log2(sets)` bits.
    pub fn new(f: &IndexFunction, sets: u64, line_bytes: u64) -> Self {
        let n = sets.trailing_zeros();
        let kind = match f {
            IndexFunction::Linear => Kind::Linear,
            IndexFunction::Xor { bits } => Kind::Xor(BitRuns::new(
                bits.iter().zip(0..n).map(|(&bit, i)| (bit, i)),
            )),
            IndexFunction::Polynomial { polynomial } => {
                let mut table = Box::new([0u64; 64]);
                // r = x^n mod P, then multiply by x (shift, reduce) for each higher power.
                let mask = sets - 1;
                let low = polynomial & mask;
                let mut r = low; // x^n = P - x^n (mod P), i.e. the low terms of P
                for slot in table.iter_mut() {
                    *slot = r;
                    let carry = r >> (n - 1) & 1;
                    r = (r << 1) & mask;
                    if carry == 1 {
                        r ^= low;
                    }
                }
                Kind::Polynomial(table, n)
            }
        };
        Self {
            kind,
            line_shift: line_bytes.trailing_zeros(),
            mask: sets - 1,
        }
    }

    /// The index of byte address `addr`.
    #[inline]
    pub fn index(&self, addr: u64) -> u64 {
        let line = addr >> self.line_shift;
        match &self.kind {
            Kind::Linear => line & self.mask,
            Kind::Xor(fold) => (line ^ fold.apply(addr)) & self.mask,
            Kind::Polynomial(table, n) => {
                let mut idx = line & self.mask;
                let mut high = if *n >= 64 { 0 } else { line >> n };
                while high != 0 {
                    let i = high.trailing_zeros();
                    idx ^= table[i as usize];
                    high &= high - 1;
                }
                idx
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fermi_xor() -> IndexFunction {
        IndexFunction::Xor {
            bits: vec![13, 14, 15, 17, 19],
        }
    }

    /// Sets touched by the 32 lines of a warp whose lanes each read one row of a
    /// 1024 x 1024 float matrix (rows 4 KB apart), in a 32-set cache of 128 B lines.
    fn sets_touched(f: &IndexFunction, stride: u64) -> usize {
        let ix = Indexer::new(f, 32, 128);
        let mut seen = std::collections::BTreeSet::new();
        for lane in 0..32u64 {
            seen.insert(ix.index(0x1_0000_0000 + lane * stride));
        }
        seen.len()
    }

    #[test]
    fn a_4kb_stride_hits_one_set_linearly_and_spreads_with_xor_and_polynomial() {
        assert_eq!(sets_touched(&IndexFunction::Linear, 4096), 1);
        // 4 KB strides: lane bits 0..4 are address bits 12..16, of which 13, 14 and 15
        // are folded in (17 and 19 stay 0 for 32 lanes): 8 distinct sets.
        assert_eq!(sets_touched(&fermi_xor(), 4096), 8);
        // IPOLY over x^5 + x^2 + 1: conflict-free for every power-of-two stride.
        let ipoly = IndexFunction::Polynomial { polynomial: 37 };
        for stride in [128u64, 256, 4096, 8192, 1 << 16] {
            assert_eq!(sets_touched(&ipoly, stride), 32, "stride {stride}");
        }
    }

    #[test]
    fn linear_is_line_mod_sets_and_xor_folds_the_named_bits() {
        let lin = Indexer::new(&IndexFunction::Linear, 32, 128);
        assert_eq!(lin.index(5 * 128 + 17), 5);
        assert_eq!(lin.index(37 * 128), 5);
        let x = Indexer::new(&fermi_xor(), 32, 128);
        assert_eq!(x.index(3 * 128), 3);
        // Address bit 13 flips index bit 0, bit 19 flips index bit 4.
        assert_eq!(x.index((1 << 13) | (3 * 128)), 2);
        assert_eq!(x.index(1 << 19), 16);
        // Bit 12 (beyond the 5 index bits) is not folded.
        assert_eq!(x.index(1 << 12), 0);
    }

    #[test]
    fn polynomial_index_is_the_gf2_remainder() {
        // P = x^5 + x^2 + 1 (37). Line number x^5 -> x^2 + 1 = 5; x^6 -> x^3 + x = 10;
        // x^7 -> x^4 + x^2 = 20; x^8 -> x^5 + x^3 = x^3 + x^2 + 1 = 13.
        let p = Indexer::new(&IndexFunction::Polynomial { polynomial: 37 }, 32, 128);
        assert_eq!(p.index(32 * 128), 5);
        assert_eq!(p.index(64 * 128), 10);
        assert_eq!(p.index(128 * 128), 20);
        assert_eq!(p.index(256 * 128), 13);
        // Linear in GF(2): the remainder of a sum is the sum of the remainders.
        assert_eq!(p.index((32 + 256 + 3) * 128), 5 ^ 13 ^ 3);
        // Slow reference: long division.
        for line in [0u64, 1, 31, 12345, 987_654_321, u64::MAX >> 7] {
            let mut r = line;
            for bit in (5..64).rev() {
                if r >> bit & 1 == 1 {
                    r ^= 37 << (bit - 5);
                }
            }
            assert_eq!(p.index(line << 7), r, "line {line}");
        }
    }

    #[test]
    fn checks_reject_bad_functions() {
        assert!(IndexFunction::Polynomial { polynomial: 37 }
            .check(5)
            .is_ok());
        assert!(IndexFunction::Polynomial { polynomial: 37 }
            .check(6)
            .is_err());
        assert!(IndexFunction::Polynomial { polynomial: 36 }
            .check(5)
            .is_err());
        assert!(fermi_xor().check(5).is_ok());
        assert!(fermi_xor().check(4).is_err());
        assert!(IndexFunction::Xor { bits: vec![64] }.check(5).is_err());
    }
}
