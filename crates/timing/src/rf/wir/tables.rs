//! WIR's storage structures (Kim and Ro, HPCA'18): the physical warp registers with
//! their free pool and reference counts (§V-E), the per-warp rename tables with pin bits
//! (§V-B, §V-D), the value signature buffer (§V-A), the reuse buffer (§V-C, Figure 9)
//! and the verify cache (§VI-C). Timing lives in the design ([`super::Wir`]); these are
//! plain state with the invariants the paper needs: a physical register is in the pool
//! exactly when nothing refers to it.

use super::config::VsbOrganisation;
use crate::kernel_info::ReuseClass;
use crate::rf::InstToken;

/// No physical register.
pub(crate) const NO_REG: u32 = u32::MAX;

/// Source registers (32-bit) one reuse-buffer tag holds at most.
pub(crate) const MAX_TAG_SRCS: usize = 8;

/// Destination registers (32-bit) one instruction writes at most: 8, a tensor-core
/// fragment (`wmma.load.c`/`wmma.mma` with f32 accumulators). With 4, the fifth to
/// eighth registers of a fragment kept their old rename mappings and later readers saw
/// stale values (77 `wir_value_mismatches` on wmma_gemm).
pub(crate) const MAX_RESULTS: usize = 8;

/// A warp register's value: one 32-bit word per lane.
pub(crate) type WarpValue = [u32; 32];

/// The physical warp registers, the free pool and the reference counts.
pub(crate) struct PhysRegs {
    values: Vec<WarpValue>,
    /// Whether `values` holds the register's contents (results wider than the model
    /// tracks are stored without them and never matched by value).
    known: Vec<bool>,
    /// References from rename tables, the VSB, reuse-buffer entries and instructions in
    /// flight.
    refs: Vec<u32>,
    /// The subset of `refs` held by rename tables.
    rename_refs: Vec<u32>,
    /// Free registers; popped from the end, so the lowest numbers go first.
    free: Vec<u32>,
    /// Registers with `rename_refs > 0`.
    mapped: u64,
    /// Registers added beyond the configured file because nothing could be evicted (a
    /// model invariant broken: reported, never expected).
    pub overflow: u64,
}

impl PhysRegs {
    pub fn new(n: u32) -> Self {
        PhysRegs {
            values: vec![[0; 32]; n as usize],
            known: vec![false; n as usize],
            refs: vec![0; n as usize],
            rename_refs: vec![0; n as usize],
            free: (0..n).rev().collect(),
            mapped: 0,
            overflow: 0,
        }
    }

    /// Registers of the file.
    pub fn capacity(&self) -> u32 {
        self.values.len() as u32
    }

    /// Registers referred to by something.
    pub fn in_use(&self) -> u32 {
        self.capacity() - self.free.len() as u32
    }

    /// Takes a free register, holding one reference for the caller.
    pub fn alloc(&mut self) -> Option<u32> {
        let p = self.free.pop()?;
        self.refs[p as usize] = 1;
        self.known[p as usize] = false;
        Some(p)
    }

    /// Adds a register to the file (see `overflow`) and allocates it.
    pub fn grow(&mut self) -> u32 {
        self.overflow += 1;
        self.values.push([0; 32]);
        self.known.push(false);
        self.refs.push(1);
        self.rename_refs.push(0);
        self.values.len() as u32 - 1
    }

    pub fn retain(&mut self, p: u32) {
        self.refs[p as usize] += 1;
    }

    /// Drops one reference; the register returns to the pool at zero.
    pub fn release(&mut self, p: u32) {
        let r = &mut self.refs[p as usize];
        debug_assert!(*r > 0, "release of unreferenced p{p}");
        *r = r.saturating_sub(1);
        if *r == 0 {
            self.free.push(p);
        }
    }

    pub fn map(&mut self, p: u32) {
        self.retain(p);
        self.rename_refs[p as usize] += 1;
        if self.rename_refs[p as usize] == 1 {
            self.mapped += 1;
        }
    }

    pub fn unmap(&mut self, p: u32) {
        self.rename_refs[p as usize] -= 1;
        if self.rename_refs[p as usize] == 0 {
            self.mapped -= 1;
        }
        self.release(p);
    }

    /// Whether `p` is mapped by no rename table entry but one.
    pub fn only_reference_is_one_mapping(&self, p: u32) -> bool {
        self.refs[p as usize] == 1 && self.rename_refs[p as usize] == 1
    }

    pub fn value(&self, p: u32) -> Option<&WarpValue> {
        self.known[p as usize].then(|| &self.values[p as usize])
    }

    pub fn set_value(&mut self, p: u32, v: Option<&WarpValue>) {
        match v {
            Some(v) => {
                self.values[p as usize] = *v;
                self.known[p as usize] = true;
            }
            None => self.known[p as usize] = false,
        }
    }

    /// Registers mapped by at least one rename-table entry.
    pub fn mapped(&self) -> u64 {
        self.mapped
    }
}

/// One logical register of one warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mapping {
    pub phys: u32,
    /// §V-D: the register is dedicated to this logical register inside a divergent flow.
    pub pinned: bool,
}

impl Mapping {
    pub const INVALID: Mapping = Mapping {
        phys: NO_REG,
        pinned: false,
    };
}

/// A 64-bit value signature for the fully associative VSB: an FNV-1a fold of the 32
/// lanes, so that a false match is as good as never drawn.
fn signature64(v: &WarpValue) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &w in v {
        for b in w.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Bytes of a warp register value (32 lanes of 4 bytes).
const VALUE_BYTES: usize = 128;

/// §VII-E's hash generation unit: an H3 hash [Carter and Wegman] of the 1024-bit value to
/// 32 bits. Each output bit is the XOR of a fixed random subset of the input bits, i.e.
/// the hash is the XOR of one random 32-bit row per set input bit. The rows come from a
/// fixed-seed generator (the same in every run), folded into one table per input byte
/// (the XOR of the rows of the byte's set bits) so a hash is 128 lookups.
fn signature32(v: &WarpValue) -> u32 {
    static TABLE: std::sync::OnceLock<Box<[[u32; 256]; VALUE_BYTES]>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut state: u64 = 0x5752_5f48_335f_3332; // fixed seed
        let mut next_row = || {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u32
        };
        let mut t = Box::new([[0u32; 256]; VALUE_BYTES]);
        for byte in t.iter_mut() {
            let rows: [u32; 8] = std::array::from_fn(|_| next_row());
            for (x, slot) in byte.iter_mut().enumerate() {
                *slot = (0..8)
                    .filter(|b| x >> b & 1 == 1)
                    .fold(0, |h, b| h ^ rows[b]);
            }
        }
        t
    });
    let mut h = 0u32;
    for (lane, &w) in v.iter().enumerate() {
        for (k, b) in w.to_le_bytes().into_iter().enumerate() {
            h ^= table[lane * 4 + k][usize::from(b)];
        }
    }
    h
}

/// §V-A: the value signature buffer, mapping value signatures to the registers that hold
/// them, in one of two organisations ([`VsbOrganisation`]): the paper's, directly indexed
/// by the low bits of a 32-bit signature (the entry's index is the signature modulo the
/// entry count, its low bits for the paper's 256), where a new signature replaces its
/// entry's older one; or fully associative with 64-bit signatures and FIFO replacement.
/// Either way a hit is only a candidate, confirmed by the design's verify read.
pub(crate) struct ValueSignatureBuffer {
    organisation: VsbOrganisation,
    /// `(signature, register)`; `NO_REG` marks an empty entry.
    entries: Vec<(u64, u32)>,
    /// Fully associative: signature to entry, and the FIFO's next victim.
    index: std::collections::HashMap<u64, usize>,
    next: usize,
}

impl ValueSignatureBuffer {
    pub fn new(n: u32, organisation: VsbOrganisation) -> Self {
        ValueSignatureBuffer {
            organisation,
            entries: vec![(0, NO_REG); n as usize],
            index: std::collections::HashMap::new(),
            next: 0,
        }
    }

    /// The signature of `v` this buffer's organisation uses.
    pub fn signature(&self, v: &WarpValue) -> u64 {
        match self.organisation {
            VsbOrganisation::DirectMapped => u64::from(signature32(v)),
            VsbOrganisation::FullyAssociative => signature64(v),
        }
    }

    fn slot(&self, signature: u64) -> usize {
        (signature % self.entries.len() as u64) as usize
    }

    /// The register registered under `signature`, if any.
    pub fn lookup(&self, signature: u64) -> Option<u32> {
        match self.organisation {
            VsbOrganisation::DirectMapped => {
                let (s, p) = self.entries[self.slot(signature)];
                (p != NO_REG && s == signature).then_some(p)
            }
            VsbOrganisation::FullyAssociative => {
                self.index.get(&signature).map(|&i| self.entries[i].1)
            }
        }
    }

    /// Registers `p` under `signature`, in its entry (direct-mapped) or the oldest entry
    /// (fully associative); returns the register it displaced (whose reference the caller
    /// drops).
    pub fn insert(&mut self, signature: u64, p: u32) -> Option<u32> {
        let i = match self.organisation {
            VsbOrganisation::DirectMapped => self.slot(signature),
            VsbOrganisation::FullyAssociative => {
                let i = self.next;
                self.next = (self.next + 1) % self.entries.len();
                i
            }
        };
        let old = self.evict(i);
        self.entries[i] = (signature, p);
        if self.organisation == VsbOrganisation::FullyAssociative {
            self.index.insert(signature, i);
        }
        old
    }

    /// Empties entry `i`; returns the register it held.
    pub fn evict(&mut self, i: usize) -> Option<u32> {
        let (h, old) = std::mem::replace(&mut self.entries[i], (0, NO_REG));
        if old == NO_REG {
            return None;
        }
        if self.index.get(&h) == Some(&i) {
            self.index.remove(&h);
        }
        Some(old)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The tag of a reuse-buffer entry (Figure 9): operation, physical sources, and for
/// loads the thread block and barrier count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReuseTag {
    pub key: u64,
    pub class: ReuseClass,
    pub srcs: [u32; MAX_TAG_SRCS],
    pub num_srcs: u8,
    /// Results (32-bit registers) the instruction writes.
    pub num_results: u8,
    /// Shared loads: the thread block (SM slot and generation); otherwise 0.
    pub block: u32,
    /// Global and shared loads: the warp's barrier count; otherwise 0.
    pub barrier: u32,
}

impl ReuseTag {
    /// The buffer index of the tag (the hash of Figure 9's tag fields).
    pub fn index(&self, entries: usize) -> usize {
        let mut h = self.key ^ (u64::from(self.block) << 32) ^ u64::from(self.barrier);
        for &s in &self.srcs[..self.num_srcs as usize] {
            h = (h ^ u64::from(s)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            h ^= h >> 29;
        }
        (h % entries as u64) as usize
    }
}

/// One reuse-buffer entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReuseEntry {
    pub tag: ReuseTag,
    pub results: [u32; MAX_RESULTS],
    /// §VI-B: reserved by a missed instruction whose result is not back yet.
    pub pending: bool,
    /// The instruction that reserved it.
    pub owner: InstToken,
}

/// §V-C: the reuse buffer, directly indexed by a hash of the tag. Every register an
/// entry names holds a reference.
pub(crate) struct ReuseBuffer {
    pub entries: Vec<Option<ReuseEntry>>,
}

impl ReuseBuffer {
    pub fn new(n: u32) -> Self {
        ReuseBuffer {
            entries: vec![None; n as usize],
        }
    }

    pub fn index_of(&self, tag: &ReuseTag) -> usize {
        tag.index(self.entries.len())
    }

    /// The entry with exactly `tag`, at its index.
    pub fn find(&self, tag: &ReuseTag) -> Option<(usize, &ReuseEntry)> {
        let i = self.index_of(tag);
        self.entries[i]
            .as_ref()
            .filter(|e| e.tag == *tag)
            .map(|e| (i, e))
    }

    /// Removes entry `i`, dropping its references.
    pub fn evict(&mut self, i: usize, regs: &mut PhysRegs) -> bool {
        let Some(e) = self.entries[i].take() else {
            return false;
        };
        for &s in &e.tag.srcs[..e.tag.num_srcs as usize] {
            regs.release(s);
        }
        if !e.pending {
            for &r in &e.results[..e.tag.num_results as usize] {
                regs.release(r);
            }
        }
        true
    }

    /// Puts `tag` at its index (evicting what was there), pending on `owner`; retains its
    /// sources. Returns the index.
    pub fn reserve(&mut self, tag: ReuseTag, owner: InstToken, regs: &mut PhysRegs) -> usize {
        let i = self.index_of(&tag);
        self.evict(i, regs);
        for &s in &tag.srcs[..tag.num_srcs as usize] {
            regs.retain(s);
        }
        self.entries[i] = Some(ReuseEntry {
            tag,
            results: [NO_REG; MAX_RESULTS],
            pending: true,
            owner,
        });
        i
    }

    /// Completes the entry at `i` reserved by `owner` with `results` (retained); false if
    /// it was evicted or taken over meanwhile.
    pub fn complete(
        &mut self,
        i: usize,
        owner: InstToken,
        results: &[u32],
        regs: &mut PhysRegs,
    ) -> bool {
        match self.entries[i].as_mut() {
            Some(e) if e.pending && e.owner == owner => {
                for (slot, &r) in e.results.iter_mut().zip(results) {
                    *slot = r;
                    regs.retain(r);
                }
                e.pending = false;
                true
            }
            _ => false,
        }
    }
}

/// §VI-C: the verify cache, fully associative with LRU replacement, tagged by physical
/// register. It stands for the register's value, which the model keeps in [`PhysRegs`].
pub(crate) struct VerifyCache {
    lines: Vec<(u32, u64)>,
    clock: u64,
}

impl VerifyCache {
    pub fn new(n: u32) -> Self {
        VerifyCache {
            lines: Vec::with_capacity(n as usize),
            clock: 0,
        }
    }

    /// Looks `p` up; on a miss the line is filled (replacing the least recently used).
    /// Returns whether it hit.
    pub fn access(&mut self, p: u32, capacity: usize) -> bool {
        self.clock += 1;
        if let Some(l) = self.lines.iter_mut().find(|l| l.0 == p) {
            l.1 = self.clock;
            return true;
        }
        if capacity == 0 {
            return false;
        }
        if self.lines.len() < capacity {
            self.lines.push((p, self.clock));
        } else if let Some(l) = self.lines.iter_mut().min_by_key(|l| l.1) {
            *l = (p, self.clock);
        }
        false
    }

    /// A register write evicts the register's line.
    pub fn invalidate(&mut self, p: u32) {
        self.lines.retain(|l| l.0 != p);
    }

    pub fn clear(&mut self) {
        self.lines.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_return_to_the_pool_when_unreferenced() {
        let mut r = PhysRegs::new(4);
        let a = r.alloc().unwrap();
        assert_eq!(a, 0, "lowest first");
        r.map(a);
        r.release(a); // the allocation's own reference
        assert_eq!(r.in_use(), 1);
        r.retain(a);
        r.unmap(a);
        assert_eq!(r.in_use(), 1, "still referenced");
        r.release(a);
        assert_eq!(r.in_use(), 0);
        assert_eq!(r.alloc(), Some(0));
    }

    #[test]
    fn the_fully_associative_vsb_replaces_the_oldest() {
        let mut v = ValueSignatureBuffer::new(2, VsbOrganisation::FullyAssociative);
        let h = v.signature(&[7u32; 32]);
        assert_eq!(v.lookup(h), None);
        assert_eq!(v.insert(h, 3), None);
        assert_eq!(v.lookup(h), Some(3));
        assert_eq!(v.lookup(h ^ 1), None);
        assert_eq!(v.insert(h ^ 1, 4), None);
        // A third value displaces the first.
        assert_eq!(v.insert(h ^ 2, 5), Some(3));
        assert_eq!(v.lookup(h), None);
        assert_eq!(v.lookup(h ^ 1), Some(4));
        assert_eq!(v.evict(1), Some(4));
        assert_eq!(v.lookup(h ^ 1), None);
        assert_ne!(v.signature(&[1; 32]), v.signature(&[2; 32]));
    }

    #[test]
    fn a_direct_mapped_vsb_conflict_evicts_the_older_signature() {
        let mut v = ValueSignatureBuffer::new(256, VsbOrganisation::DirectMapped);
        // Two values whose 32-bit signatures share their low 8 bits: the same entry.
        let a = [5u32; 32];
        let sa = v.signature(&a);
        assert!(sa <= u64::from(u32::MAX), "32-bit signatures");
        let (b, sb) = (0u32..)
            .map(|x| {
                let mut b = [5u32; 32];
                b[3] = x;
                (b, v.signature(&b))
            })
            .find(|&(_, s)| s != sa && s % 256 == sa % 256)
            .unwrap();
        assert_eq!(v.insert(sa, 10), None);
        assert_eq!(v.lookup(sa), Some(10));
        assert_eq!(v.lookup(sb), None, "same entry, other signature: a miss");
        // The newer signature evicts the older one from their entry.
        assert_eq!(v.insert(sb, 11), Some(10));
        assert_eq!(v.lookup(sa), None);
        assert_eq!(v.lookup(sb), Some(11));
        // Another entry is untouched by the conflict.
        let c = [6u32; 32];
        let sc = v.signature(&c);
        assert_ne!(sc % 256, sb % 256);
        assert_eq!(v.insert(sc, 12), None);
        assert_eq!((v.lookup(sb), v.lookup(sc)), (Some(11), Some(12)));
        assert_eq!(v.evict((sb % 256) as usize), Some(11));
        assert_eq!(v.lookup(sb), None);
        assert_ne!(b, a);
    }

    #[test]
    fn the_h3_signature_is_linear_in_the_value_bits() {
        // H3 is an XOR of rows per set bit: h(x ^ y) = h(x) ^ h(y), h(0) = 0.
        let v = ValueSignatureBuffer::new(256, VsbOrganisation::DirectMapped);
        let x: WarpValue = std::array::from_fn(|i| (i as u32).wrapping_mul(0x9e37_79b9));
        let y: WarpValue = std::array::from_fn(|i| 0xdead_beef ^ (i as u32) << 7);
        let xy: WarpValue = std::array::from_fn(|i| x[i] ^ y[i]);
        assert_eq!(v.signature(&[0; 32]), 0);
        assert_eq!(v.signature(&xy), v.signature(&x) ^ v.signature(&y));
        // Every single-bit change changes the signature (no zero row drawn).
        let mut seen = std::collections::HashSet::new();
        for bit in 0..1024 {
            let mut e = [0u32; 32];
            e[bit / 32] = 1 << (bit % 32);
            assert!(seen.insert(v.signature(&e)), "bit {bit}");
        }
    }

    #[test]
    fn the_verify_cache_is_lru_and_writes_evict() {
        let mut c = VerifyCache::new(2);
        assert!(!c.access(1, 2));
        assert!(!c.access(2, 2));
        assert!(c.access(1, 2));
        assert!(!c.access(3, 2)); // evicts 2, the least recently used
        assert!(c.access(1, 2));
        assert!(!c.access(2, 2));
        c.invalidate(2);
        assert!(!c.access(2, 2));
    }

    #[test]
    fn reuse_entries_hold_references_until_evicted() {
        let mut regs = PhysRegs::new(8);
        let s = regs.alloc().unwrap();
        let r = regs.alloc().unwrap();
        let mut b = ReuseBuffer::new(4);
        let mut tag = ReuseTag {
            key: 42,
            class: ReuseClass::Alu,
            srcs: [NO_REG; MAX_TAG_SRCS],
            num_srcs: 1,
            num_results: 1,
            block: 0,
            barrier: 0,
        };
        tag.srcs[0] = s;
        let i = b.reserve(tag, InstToken(9), &mut regs);
        assert!(b.find(&tag).is_some_and(|(_, e)| e.pending));
        assert!(
            !b.complete(i, InstToken(8), &[r], &mut regs),
            "not the owner"
        );
        assert!(b.complete(i, InstToken(9), &[r], &mut regs));
        regs.release(s);
        regs.release(r);
        assert_eq!(regs.in_use(), 2, "the entry holds both");
        assert!(b.evict(i, &mut regs));
        assert_eq!(regs.in_use(), 0);
    }
}
