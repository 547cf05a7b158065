//! Dense fixed-size bit sets over typed indices: the lattice values of the dataflow
//! analyses (live registers, reaching definitions) and the scratch sets of the graph
//! algorithms.
//!
//! A set is a `Vec<u64>` sized for its domain once; union, difference and intersection work
//! a word at a time and report whether they changed anything, which is what a worklist
//! solver needs to detect a fixed point. Bits past the domain size are always zero, so
//! whole-word comparisons and counts are exact.

use std::fmt;
use std::marker::PhantomData;

use crate::entity::{BlockId, InstId, RegId};

use super::dataflow::JoinSemiLattice;

/// A dense index that can name a bit of a [`BitSet`].
pub trait Idx: Copy + Eq {
    fn from_index(index: usize) -> Self;
    fn to_index(self) -> usize;
}

impl Idx for usize {
    #[inline]
    fn from_index(index: usize) -> Self {
        index
    }
    #[inline]
    fn to_index(self) -> usize {
        self
    }
}

macro_rules! entity_idx {
    ($($t:ty),*) => {$(
        impl Idx for $t {
            #[inline]
            fn from_index(index: usize) -> Self {
                <$t>::new(index)
            }
            #[inline]
            fn to_index(self) -> usize {
                self.index()
            }
        }
    )*};
}
entity_idx!(BlockId, InstId, RegId);

const WORD_BITS: usize = 64;

#[inline]
fn word_and_mask(index: usize) -> (usize, u64) {
    (index / WORD_BITS, 1u64 << (index % WORD_BITS))
}

/// A set of indices `0..domain_size()`, stored one bit per possible member.
#[derive(PartialEq, Eq, Hash)]
pub struct BitSet<T: Idx = usize> {
    domain_size: usize,
    words: Vec<u64>,
    marker: PhantomData<fn(T) -> T>,
}

impl<T: Idx> Clone for BitSet<T> {
    fn clone(&self) -> Self {
        BitSet {
            domain_size: self.domain_size,
            words: self.words.clone(),
            marker: PhantomData,
        }
    }

    /// Reuses the allocation: the solver copies states this way in its inner loop.
    fn clone_from(&mut self, source: &Self) {
        self.domain_size = source.domain_size;
        self.words.clone_from(&source.words);
    }
}

impl<T: Idx> Default for BitSet<T> {
    /// The empty set over an empty domain.
    fn default() -> Self {
        Self::new_empty(0)
    }
}

impl<T: Idx> BitSet<T> {
    /// The empty set over `0..domain_size`.
    pub fn new_empty(domain_size: usize) -> Self {
        BitSet {
            domain_size,
            words: vec![0; domain_size.div_ceil(WORD_BITS)],
            marker: PhantomData,
        }
    }

    /// The set of every index in `0..domain_size`.
    pub fn new_filled(domain_size: usize) -> Self {
        let mut set = Self::new_empty(domain_size);
        set.insert_all();
        set
    }

    /// How many indices the set can hold (not how many it holds: see [`BitSet::count`]).
    pub fn domain_size(&self) -> usize {
        self.domain_size
    }

    /// Number of members.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    #[inline]
    pub fn contains(&self, elem: T) -> bool {
        let index = elem.to_index();
        debug_assert!(index < self.domain_size);
        let (word, mask) = word_and_mask(index);
        self.words[word] & mask != 0
    }

    /// Adds `elem`; true if it was not already a member.
    #[inline]
    pub fn insert(&mut self, elem: T) -> bool {
        let index = elem.to_index();
        debug_assert!(index < self.domain_size);
        let (word, mask) = word_and_mask(index);
        let old = self.words[word];
        self.words[word] = old | mask;
        old & mask == 0
    }

    /// Removes `elem`; true if it was a member.
    #[inline]
    pub fn remove(&mut self, elem: T) -> bool {
        let index = elem.to_index();
        debug_assert!(index < self.domain_size);
        let (word, mask) = word_and_mask(index);
        let old = self.words[word];
        self.words[word] = old & !mask;
        old & mask != 0
    }

    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    pub fn insert_all(&mut self) {
        self.words.fill(!0);
        self.clear_excess_bits();
    }

    fn clear_excess_bits(&mut self) {
        let used = self.domain_size % WORD_BITS;
        if used != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << used) - 1;
            }
        }
    }

    /// `self ∪= other`; true if `self` changed.
    pub fn union_with(&mut self, other: &Self) -> bool {
        self.combine(other, |a, b| a | b)
    }

    /// `self −= other`; true if `self` changed.
    pub fn subtract(&mut self, other: &Self) -> bool {
        self.combine(other, |a, b| a & !b)
    }

    /// `self ∩= other`; true if `self` changed.
    pub fn intersect_with(&mut self, other: &Self) -> bool {
        self.combine(other, |a, b| a & b)
    }

    #[inline]
    fn combine(&mut self, other: &Self, op: impl Fn(u64, u64) -> u64) -> bool {
        assert_eq!(
            self.domain_size, other.domain_size,
            "bit sets over different domains"
        );
        let mut changed = 0u64;
        for (a, &b) in self.words.iter_mut().zip(&other.words) {
            let new = op(*a, b);
            changed |= new ^ *a;
            *a = new;
        }
        changed != 0
    }

    /// True if every member of `self` is a member of `other`.
    pub fn is_subset(&self, other: &Self) -> bool {
        assert_eq!(
            self.domain_size, other.domain_size,
            "bit sets over different domains"
        );
        self.words
            .iter()
            .zip(&other.words)
            .all(|(&a, &b)| a & !b == 0)
    }

    /// Number of members of `self ∪ other`, without building it.
    pub fn union_count(&self, other: &Self) -> usize {
        assert_eq!(
            self.domain_size, other.domain_size,
            "bit sets over different domains"
        );
        self.words
            .iter()
            .zip(&other.words)
            .map(|(&a, &b)| (a | b).count_ones() as usize)
            .sum()
    }

    /// Members in increasing index order.
    pub fn iter(&self) -> BitIter<'_, T> {
        BitIter {
            words: &self.words,
            word_index: 0,
            current: self.words.first().copied().unwrap_or(0),
            marker: PhantomData,
        }
    }

    /// The smallest member `>= from`, if any.
    pub fn next_member(&self, from: usize) -> Option<T> {
        if from >= self.domain_size {
            return None;
        }
        let (mut word_index, _) = word_and_mask(from);
        let mut word = self.words[word_index] & (!0u64 << (from % WORD_BITS));
        loop {
            if word != 0 {
                let index = word_index * WORD_BITS + word.trailing_zeros() as usize;
                return Some(T::from_index(index));
            }
            word_index += 1;
            word = *self.words.get(word_index)?;
        }
    }
}

impl<T: Idx> JoinSemiLattice for BitSet<T> {
    /// Union: the join of the may-analyses (liveness, reaching definitions).
    fn join(&mut self, other: &Self) -> bool {
        self.union_with(other)
    }
}

impl<T: Idx> Extend<T> for BitSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for elem in iter {
            self.insert(elem);
        }
    }
}

impl<T: Idx + fmt::Debug> fmt::Debug for BitSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Iterator over the members of a [`BitSet`], in increasing order.
pub struct BitIter<'a, T: Idx> {
    words: &'a [u64],
    word_index: usize,
    current: u64,
    marker: PhantomData<fn() -> T>,
}

impl<T: Idx> Iterator for BitIter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros() as usize;
                // Clear the lowest set bit.
                self.current &= self.current - 1;
                return Some(T::from_index(self.word_index * WORD_BITS + bit));
            }
            self.word_index += 1;
            self.current = *self.words.get(self.word_index)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn insert_remove_contains_across_word_boundaries() {
        let mut s: BitSet = BitSet::new_empty(130);
        assert!(s.insert(0));
        assert!(s.insert(63));
        assert!(s.insert(64));
        assert!(s.insert(129));
        assert!(!s.insert(64));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 63, 64, 129]);
        assert_eq!(s.count(), 4);
        assert!(s.remove(63));
        assert!(!s.remove(63));
        assert!(!s.contains(63));
        assert_eq!(s.next_member(1), Some(64));
        assert_eq!(s.next_member(65), Some(129));
        assert_eq!(s.next_member(130), None);
    }

    #[test]
    fn filled_set_has_no_bits_past_the_domain() {
        let s: BitSet = BitSet::new_filled(70);
        assert_eq!(s.count(), 70);
        assert_eq!(s.iter().last(), Some(69));
        let empty: BitSet = BitSet::new_filled(0);
        assert!(empty.is_empty());
        assert_eq!(empty.iter().next(), None);
    }

    #[test]
    fn typed_members_come_back_typed() {
        let mut s: BitSet<RegId> = BitSet::new_empty(10);
        s.insert(RegId(7));
        s.insert(RegId(2));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![RegId(2), RegId(7)]);
        assert_eq!(format!("{s:?}"), "{RegId(2), RegId(7)}");
    }

    fn set_of(domain: usize, members: &BTreeSet<usize>) -> BitSet {
        let mut s = BitSet::new_empty(domain);
        s.extend(members.iter().copied());
        s
    }

    proptest! {
        #[test]
        fn set_operations_match_btreeset(
            domain in 1usize..200,
            a in proptest::collection::btree_set(0usize..200, 0..40),
            b in proptest::collection::btree_set(0usize..200, 0..40),
        ) {
            let a: BTreeSet<usize> = a.into_iter().filter(|&x| x < domain).collect();
            let b: BTreeSet<usize> = b.into_iter().filter(|&x| x < domain).collect();
            let (sa, sb) = (set_of(domain, &a), set_of(domain, &b));

            let mut u = sa.clone();
            prop_assert_eq!(u.union_with(&sb), !b.is_subset(&a));
            prop_assert_eq!(u.iter().collect::<BTreeSet<_>>(), &a | &b);
            prop_assert_eq!(sa.union_count(&sb), (&a | &b).len());

            let mut d = sa.clone();
            prop_assert_eq!(d.subtract(&sb), !a.is_disjoint(&b));
            prop_assert_eq!(d.iter().collect::<BTreeSet<_>>(), &a - &b);

            let mut i = sa.clone();
            prop_assert_eq!(i.intersect_with(&sb), !a.is_subset(&b));
            prop_assert_eq!(i.iter().collect::<BTreeSet<_>>(), &a & &b);

            prop_assert_eq!(sa.is_subset(&sb), a.is_subset(&b));
            prop_assert_eq!(sa.count(), a.len());
            let mut c = sb.clone();
            c.clone_from(&sa);
            prop_assert_eq!(&c, &sa);
        }
    }
}
