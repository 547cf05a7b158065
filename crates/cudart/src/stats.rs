//! Per-kernel statistics: the line printed after each kernel and the JSON file written at
//! exit (`REGSIM_STATS`).

use std::fmt::Write as _;

use crate::device::{Dim3, KernelStats};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRecord {
    pub name: String,
    pub grid: Dim3,
    pub block: Dim3,
    pub stats: KernelStats,
}

impl KernelRecord {
    /// The one stderr line after a kernel.
    pub fn summary_line(&self) -> String {
        format!(
            "regsim: kernel {} grid {} block {}: {} warp instructions, {} thread instructions",
            self.name,
            self.grid,
            self.block,
            self.stats.warp_instructions,
            self.stats.thread_instructions
        )
    }
}

/// `{"kernels":[{"name","grid":[x,y,z],"block":[x,y,z],"warp_instructions",
/// "thread_instructions"}…], "total":{"kernels","warp_instructions","thread_instructions"}}`
pub fn to_json(records: &[KernelRecord]) -> String {
    let mut out = String::from("{\n  \"kernels\": [");
    for (i, r) in records.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            out,
            "{sep}\n    {{\"name\": {}, \"grid\": [{}, {}, {}], \"block\": [{}, {}, {}], \
             \"warp_instructions\": {}, \"thread_instructions\": {}}}",
            json_string(&r.name),
            r.grid.x,
            r.grid.y,
            r.grid.z,
            r.block.x,
            r.block.y,
            r.block.z,
            r.stats.warp_instructions,
            r.stats.thread_instructions
        );
    }
    let warp: u64 = records.iter().map(|r| r.stats.warp_instructions).sum();
    let thread: u64 = records.iter().map(|r| r.stats.thread_instructions).sum();
    let _ = write!(
        out,
        "\n  ],\n  \"total\": {{\"kernels\": {}, \"warp_instructions\": {warp}, \"thread_instructions\": {thread}}}\n}}\n",
        records.len()
    );
    out
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lists_kernels_and_totals() {
        let rec = |name: &str, w, t| KernelRecord {
            name: name.to_string(),
            grid: Dim3 { x: 48, y: 1, z: 1 },
            block: Dim3 { x: 256, y: 2, z: 1 },
            stats: KernelStats {
                warp_instructions: w,
                thread_instructions: t,
            },
        };
        let json = to_json(&[rec("_Z5saxpy", 10, 300), rec("a\"b", 5, 7)]);
        assert!(json.contains(r#"{"name": "_Z5saxpy", "grid": [48, 1, 1], "block": [256, 2, 1], "warp_instructions": 10, "thread_instructions": 300}"#), "{json}");
        assert!(json.contains(r#""name": "a\"b""#));
        assert!(
            json.contains(
                r#""total": {"kernels": 2, "warp_instructions": 15, "thread_instructions": 307}"#
            ),
            "{json}"
        );
        assert_eq!(to_json(&[]).matches("\"kernels\"").count(), 2);
        assert_eq!(
            rec("k", 1, 2).summary_line(),
            "regsim: kernel k grid (48,1,1) block (256,2,1): 1 warp instructions, 2 thread instructions"
        );
    }
}
