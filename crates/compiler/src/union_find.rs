//! Disjoint sets over dense `u32` indices with path compression. The register allocator
//! coalesces copy-related registers with it; ORF/LRF allocation groups definitions into
//! values (webs).

pub(crate) struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    /// `n` singleton sets `0..n`.
    pub(crate) fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.parent.len()
    }

    /// The representative of `x`'s set, shortening the path to it.
    pub(crate) fn find(&mut self, x: u32) -> u32 {
        let root = self.find_const(x);
        let mut x = x;
        while self.parent[x as usize] != root {
            let next = self.parent[x as usize];
            self.parent[x as usize] = root;
            x = next;
        }
        root
    }

    /// [`UnionFind::find`] without path compression.
    pub(crate) fn find_const(&self, x: u32) -> u32 {
        let mut root = x;
        while self.parent[root as usize] != root {
            root = self.parent[root as usize];
        }
        root
    }

    /// Puts representative `child` under representative `root`: `root` stays the
    /// representative of the joined set.
    pub(crate) fn link(&mut self, root: u32, child: u32) {
        self.parent[child as usize] = root;
    }

    /// Joins the sets of `a` and `b`; the smaller representative represents both.
    pub(crate) fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.link(ra.min(rb), ra.max(rb));
        }
    }
}
