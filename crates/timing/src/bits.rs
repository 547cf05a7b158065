//! Bit arithmetic of the hot paths, precomputed once: moving a fixed set of address
//! bits to fixed places ([`BitRuns`]), dividing by a fixed channel count ([`Divisor`]),
//! and visiting a [`BitSet`]'s members in round-robin order ([`RoundRobin`]).
//!
//! Every L2 lookup and DRAM request decodes its address (set index, channel, bank, row),
//! so a memory-bound run does this millions of times; a loop over single bits or a
//! hardware 64-bit division per access showed up in profiles. Both types give exactly
//! the result of the plain formula; the tests hold them against it.

use ir::analysis::bitset::BitSet;

/// A fixed bit permutation: source bit `src[k]` goes to destination bit `dst[k]`, stored
/// as runs of consecutive bits that move together, so a typical address field costs one
/// shift-mask-shift per run instead of one per bit.
#[derive(Clone, Debug)]
pub struct BitRuns {
    /// `(source shift, mask of the run's width, destination shift)`.
    runs: Box<[(u8, u64, u8)]>,
}

impl BitRuns {
    /// From `(source bit, destination bit)` pairs, in any order; bits are 0..63.
    pub fn new(pairs: impl IntoIterator<Item = (u32, u32)>) -> Self {
        let mut pairs: Vec<(u32, u32)> = pairs
            .into_iter()
            .filter(|&(s, d)| s < 64 && d < 64)
            .collect();
        pairs.sort_unstable();
        let mut runs = Vec::new();
        let mut k = 0;
        while k < pairs.len() {
            let (s, d) = pairs[k];
            let mut width = 1;
            while k + width < pairs.len()
                && pairs[k + width] == (s + width as u32, d + width as u32)
            {
                width += 1;
            }
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            runs.push((s as u8, mask, d as u8));
            k += width;
        }
        Self {
            runs: runs.into_boxed_slice(),
        }
    }

    /// Gathers the bits of `mask` into the low bits, in order (bit `i` of the result is
    /// the `i`-th lowest set bit of `mask`).
    pub fn gather(mask: u64) -> Self {
        let mut m = mask;
        let mut pairs = Vec::new();
        while m != 0 {
            pairs.push((m.trailing_zeros(), pairs.len() as u32));
            m &= m - 1;
        }
        Self::new(pairs)
    }

    /// The permuted bits of `a` (bits not named are 0).
    #[inline]
    pub fn apply(&self, a: u64) -> u64 {
        let mut out = 0;
        for &(s, mask, d) in self.runs.iter() {
            out |= (a >> s & mask) << d;
        }
        out
    }
}

/// Division by a fixed non-zero divisor `d` through a multiplication: for `x * d <
/// 2^64` (every address a GPU config produces), `x / d` is the high half of `x * m`
/// with `m = ceil(2^64 / d)`: the product overshoots `x / d` by less than `x / 2^64 <
/// 1 / d`, too little to reach the next integer. Larger `x` falls back to division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u64,
    magic: u128,
    /// The largest `x` the multiplication serves.
    limit: u64,
}

impl Divisor {
    /// A divisor of `d`; `d` must not be zero (configs are validated before this).
    pub fn new(d: u64) -> Self {
        let d = d.max(1);
        Self {
            d,
            magic: (1u128 << 64).div_ceil(u128::from(d)),
            limit: u64::MAX / d,
        }
    }

    /// `d`.
    pub fn divisor(&self) -> u64 {
        self.d
    }

    /// `x / d`.
    #[inline]
    pub fn div(&self, x: u64) -> u64 {
        if x <= self.limit {
            ((u128::from(x) * self.magic) >> 64) as u64
        } else {
            x / self.d
        }
    }

    /// `x / d` rounded up.
    #[inline]
    pub fn div_ceil(&self, x: u64) -> u64 {
        let (q, r) = self.div_rem(x);
        q + u64::from(r != 0)
    }

    /// `(x / d, x % d)`.
    #[inline]
    pub fn div_rem(&self, x: u64) -> (u64, u64) {
        let q = self.div(x);
        (q, x - q * self.d)
    }
}

/// The members of a [`BitSet`] over `0..n` in the order `start, start + 1, ..., n - 1,
/// 0, ..., start - 1`: a round-robin scan that skips non-members a word at a time.
/// Reads the set afresh at each step, so removing members already visited is allowed.
pub struct RoundRobin {
    start: usize,
    n: usize,
    next: usize,
    wrapped: bool,
}

impl RoundRobin {
    /// A scan of `0..n` from `start` (taken modulo `n`).
    pub fn new(start: usize, n: usize) -> Self {
        let start = if start >= n && n > 0 {
            start % n
        } else {
            start
        };
        Self {
            start,
            n,
            next: start,
            wrapped: false,
        }
    }

    /// The next member of `set` in the scan.
    pub fn next(&mut self, set: &BitSet) -> Option<usize> {
        loop {
            let end = if self.wrapped { self.start } else { self.n };
            if let Some(i) = set.next_member(self.next).filter(|&i| i < end) {
                self.next = i + 1;
                return Some(i);
            }
            if self.wrapped {
                return None;
            }
            self.wrapped = true;
            self.next = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gather_reference(a: u64, mask: u64) -> u64 {
        let (mut m, mut out, mut k) = (mask, 0u64, 0);
        while m != 0 {
            let b = m.trailing_zeros();
            out |= (a >> b & 1) << k;
            k += 1;
            m &= m - 1;
        }
        out
    }

    fn lcg(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *x
    }

    #[test]
    fn gather_matches_bit_by_bit_on_scattered_and_contiguous_masks() {
        let masks = [
            0u64,
            1,
            u64::MAX,
            0xffff_0000,
            0b1011_0110_0000_0000,
            0x8000_0000_0000_0001,
            0x0000_ffff_fff0_0000,
        ];
        let mut x = 7u64;
        for &mask in &masks {
            let g = BitRuns::gather(mask);
            for _ in 0..1000 {
                let a = lcg(&mut x);
                assert_eq!(g.apply(a), gather_reference(a, mask), "mask {mask:#x}");
            }
        }
        // Three runs for two contiguous fields and a lone bit.
        assert_eq!(BitRuns::gather(0b1_0111_0011).runs.len(), 3);
    }

    #[test]
    fn runs_place_bits_where_named() {
        // Address bits 13, 14, 15, 17, 19 onto index bits 0..4 (the Fermi L1D fold).
        let r = BitRuns::new([(13, 0), (14, 1), (15, 2), (17, 3), (19, 4)]);
        assert_eq!(r.runs.len(), 3);
        assert_eq!(r.apply(1 << 13), 1);
        assert_eq!(r.apply(1 << 17), 8);
        assert_eq!(r.apply(1 << 19 | 1 << 14), 18);
        assert_eq!(r.apply(1 << 16 | 1 << 18 | 1 << 12), 0);
    }

    #[test]
    fn round_robin_visits_members_from_the_start_and_wraps() {
        let mut set = BitSet::new_empty(72);
        for i in [1, 5, 63, 64, 70] {
            set.insert(i);
        }
        let scan = |start: usize, n: usize, set: &BitSet| {
            let mut rr = RoundRobin::new(start, n);
            std::iter::from_fn(|| rr.next(set)).collect::<Vec<_>>()
        };
        assert_eq!(scan(5, 72, &set), vec![5, 63, 64, 70, 1]);
        assert_eq!(scan(0, 72, &set), vec![1, 5, 63, 64, 70]);
        assert_eq!(scan(72, 72, &set), vec![1, 5, 63, 64, 70]);
        assert_eq!(scan(66, 68, &set), vec![1, 5, 63, 64]);
        // Against the modulo formulation on pseudo-random sets.
        let mut x = 5u64;
        for _ in 0..200 {
            let n = (lcg(&mut x) % 130) as usize + 1;
            let mut set = BitSet::new_empty(n);
            for i in 0..n {
                if lcg(&mut x).is_multiple_of(3) {
                    set.insert(i);
                }
            }
            let start = (lcg(&mut x) % (n as u64 + 1)) as usize;
            let want: Vec<usize> = (0..n)
                .map(|j| (start + j) % n)
                .filter(|&i| set.contains(i))
                .collect();
            assert_eq!(scan(start, n, &set), want, "n {n} start {start}");
        }
    }

    #[test]
    fn division_is_exact_for_every_divisor_and_size() {
        let mut x = 99u64;
        for d in [1u64, 2, 3, 5, 6, 7, 10, 12, 24, 32, 1000, 65_535, u64::MAX] {
            let div = Divisor::new(d);
            for v in [0u64, 1, d - 1, d, d + 1, u64::MAX / d, u64::MAX, 1 << 47] {
                assert_eq!(div.div(v), v / d, "{v} / {d}");
            }
            for _ in 0..5000 {
                let v = lcg(&mut x) >> (lcg(&mut x) % 64);
                assert_eq!(div.div_rem(v), (v / d, v % d), "{v} / {d}");
                assert_eq!(div.div_ceil(v), v.div_ceil(d), "{v} / {d} rounded up");
            }
        }
    }
}
