//! One thread's local memory (`.local`): a flat byte space of the thread's frame size,
//! zero until written, whose pages are allocated at their first write.
//!
//! A kernel may declare up to 512 KiB of `.local` per thread, and every thread of a
//! resident CTA has its frame, so the declared total is large (a CTA of 1024 threads at
//! the limit: 512 MiB) while a program usually touches a little of it. Allocating whole
//! frames cost what the program declares: 60 CTAs of such threads in waves held 7.9 GB
//! (freed frames came back from the heap allocator, which zeroes, and so commits, them).
//! Here a read of a page never written returns zeros without allocating, and a write
//! allocates only its page, so host memory follows what the program touches; the pages
//! go with the CTA when it exits.

/// Bytes per page (the host's page size: a page allocated is a page committed).
const PAGE_BITS: u32 = 12;
const PAGE: u64 = 1 << PAGE_BITS;

/// A thread's local memory of `len` bytes (see the module documentation).
#[derive(Debug, Default, Clone)]
pub struct LocalMemory {
    len: u64,
    /// Page `i` holds bytes `i * PAGE ..`, at most `PAGE` of them (the last page of a
    /// short space holds only what the space has); `None` or past the end: zeros.
    pages: Vec<Option<Box<[u8]>>>,
}

/// Why a local access failed: it ends past the space (`limit` its size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalOverflow {
    pub limit: u64,
}

impl LocalMemory {
    /// A space of `len` bytes, all zero, nothing allocated.
    pub fn new(len: u64) -> Self {
        LocalMemory {
            len,
            pages: Vec::new(),
        }
    }

    /// The size of the space in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of pages allocated (what the space costs the host).
    pub fn allocated_bytes(&self) -> u64 {
        self.pages.iter().flatten().map(|p| p.len() as u64).sum()
    }

    /// Grows the space to at least `len` bytes; the new bytes are zero. Never shrinks.
    pub fn grow_to(&mut self, len: u64) {
        if len <= self.len {
            return;
        }
        // A short last page becomes as long as the new size allows.
        let last = (self.len / PAGE) as usize;
        if let Some(Some(page)) = self.pages.get_mut(last) {
            let want = (len - last as u64 * PAGE).min(PAGE) as usize;
            let mut longer = vec![0u8; want].into_boxed_slice();
            longer[..page.len()].copy_from_slice(page);
            *page = longer;
        }
        self.len = len;
    }

    /// The range `addr..addr + size` if it lies inside the space.
    #[inline]
    fn check(&self, addr: u64, size: u32) -> Result<(), LocalOverflow> {
        match addr.checked_add(u64::from(size)) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(LocalOverflow { limit: self.len }),
        }
    }

    /// Reads `size` (at most 8) bytes at `addr`, little-endian.
    #[inline]
    pub fn read_uint(&self, addr: u64, size: u32) -> Result<u64, LocalOverflow> {
        self.check(addr, size)?;
        let mut b = [0u8; 8];
        let off = (addr % PAGE) as usize;
        if off + size as usize <= PAGE as usize {
            if let Some(Some(page)) = self.pages.get((addr / PAGE) as usize) {
                b[..size as usize].copy_from_slice(&page[off..off + size as usize]);
            }
        } else {
            // Across two pages (a misaligned access): byte by byte.
            for (i, byte) in b.iter_mut().take(size as usize).enumerate() {
                *byte = self.byte(addr + i as u64);
            }
        }
        Ok(u64::from_le_bytes(b))
    }

    /// Writes the low `size` (at most 8) bytes of `value` at `addr`, little-endian.
    #[inline]
    pub fn write_uint(&mut self, addr: u64, size: u32, value: u64) -> Result<(), LocalOverflow> {
        self.check(addr, size)?;
        let bytes = value.to_le_bytes();
        let off = (addr % PAGE) as usize;
        if off + size as usize <= PAGE as usize {
            let page = self.page_mut(addr / PAGE);
            page[off..off + size as usize].copy_from_slice(&bytes[..size as usize]);
        } else {
            for (i, &byte) in bytes.iter().take(size as usize).enumerate() {
                let a = addr + i as u64;
                self.page_mut(a / PAGE)[(a % PAGE) as usize] = byte;
            }
        }
        Ok(())
    }

    fn byte(&self, addr: u64) -> u8 {
        match self.pages.get((addr / PAGE) as usize) {
            Some(Some(page)) => page[(addr % PAGE) as usize],
            _ => 0,
        }
    }

    /// Page `index`, allocated zeroed at its first use (inside the space: checked by the
    /// caller).
    fn page_mut(&mut self, index: u64) -> &mut [u8] {
        let i = index as usize;
        if self.pages.len() <= i {
            self.pages.resize_with(i + 1, || None);
        }
        let len = (self.len - index * PAGE).min(PAGE) as usize;
        self.pages[i].get_or_insert_with(|| vec![0u8; len].into_boxed_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_bytes_read_zero_and_allocate_nothing() {
        let m = LocalMemory::new(512 * 1024);
        assert_eq!(m.read_uint(0, 8), Ok(0));
        assert_eq!(m.read_uint(512 * 1024 - 4, 4), Ok(0));
        assert_eq!(m.allocated_bytes(), 0);
        assert_eq!(
            m.read_uint(512 * 1024 - 2, 4),
            Err(LocalOverflow { limit: 512 * 1024 })
        );
        assert_eq!(
            m.read_uint(u64::MAX, 8),
            Err(LocalOverflow { limit: 512 * 1024 })
        );
    }

    #[test]
    fn a_write_allocates_only_its_page() {
        let mut m = LocalMemory::new(512 * 1024);
        m.write_uint(524_000, 4, 0xdead_beef).unwrap();
        assert_eq!(m.allocated_bytes(), PAGE);
        assert_eq!(m.read_uint(524_000, 4), Ok(0xdead_beef));
        assert_eq!(m.read_uint(524_000, 2), Ok(0xbeef));
        assert_eq!(m.read_uint(524_002, 2), Ok(0xdead));
        assert_eq!(m.read_uint(0, 4), Ok(0));
        assert_eq!(
            m.write_uint(512 * 1024, 1, 1),
            Err(LocalOverflow { limit: 512 * 1024 })
        );
        assert_eq!(m.allocated_bytes(), PAGE);
    }

    #[test]
    fn a_short_space_allocates_its_size_and_grows() {
        let mut m = LocalMemory::new(100);
        m.write_uint(96, 4, 7).unwrap();
        assert_eq!(m.allocated_bytes(), 100);
        // A call's frame above: the page grows, the bytes stay.
        m.grow_to(5000);
        assert_eq!(m.len(), 5000);
        assert_eq!(m.read_uint(96, 4), Ok(7));
        m.write_uint(4096 + 800, 8, u64::MAX).unwrap();
        assert_eq!(m.allocated_bytes(), PAGE + (5000 - PAGE));
        assert_eq!(m.read_uint(4096 + 800, 8), Ok(u64::MAX));
        m.grow_to(10);
        assert_eq!(m.len(), 5000, "never shrinks");
    }

    #[test]
    fn an_access_across_two_pages_reads_what_was_written() {
        let mut m = LocalMemory::new(3 * PAGE);
        m.write_uint(PAGE - 3, 8, 0x0102_0304_0506_0708).unwrap();
        assert_eq!(m.read_uint(PAGE - 3, 8), Ok(0x0102_0304_0506_0708));
        assert_eq!(m.read_uint(PAGE, 4), Ok(0x0203_0405));
        assert_eq!(m.allocated_bytes(), 2 * PAGE);
    }
}
