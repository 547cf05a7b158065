//! Device memory copied and put back: what a functional pass that must leave no trace
//! (a profiling pass, a sampled simulation's trial run) takes before it runs.

use super::{GlobalMemory, MemError};

/// The contents of every allocation, and how many stray-access warnings there were.
pub struct Snapshot {
    contents: Vec<(u64, Vec<u8>)>,
    strays: usize,
}

impl Snapshot {
    pub fn take(memory: &GlobalMemory) -> Result<Self, MemError> {
        let mut contents = Vec::new();
        for (base, len) in memory.allocations().collect::<Vec<_>>() {
            let mut bytes = vec![0; len as usize];
            memory.read(base, &mut bytes)?;
            contents.push((base, bytes));
        }
        Ok(Snapshot {
            contents,
            strays: memory.stray_warnings.len(),
        })
    }

    /// Puts the memory back as it was: contents, allocations made since (device-side
    /// `malloc`) freed, stray-access warnings since dropped.
    pub fn restore(self, memory: &mut GlobalMemory) -> Result<(), MemError> {
        let before: Vec<u64> = self.contents.iter().map(|(b, _)| *b).collect();
        let added: Vec<u64> = memory
            .allocations()
            .map(|(b, _)| b)
            .filter(|b| before.binary_search(b).is_err())
            .collect();
        for b in added {
            memory.free(b)?;
        }
        for (base, bytes) in &self.contents {
            memory.write(*base, bytes)?;
        }
        memory.stray_warnings.truncate(self.strays);
        memory.take_stray();
        Ok(())
    }
}
