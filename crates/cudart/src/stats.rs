//! Per-kernel statistics: the line printed after each kernel and the JSON file written at
//! exit (`REGSIM_STATS`).

use std::fmt::Write as _;

use crate::device::{Dim3, KernelStats};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRecord {
    /// Demangled (`saxpy(int, float, float const*, float*)`), or as in the PTX when the
    /// name is not a C++ mangled name.
    pub name: String,
    /// The name in the PTX (`_Z5saxpyifPKfPf`).
    pub mangled: String,
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

/// The kernel name a user wrote: `_Z5saxpyifPKfPf` becomes
/// `saxpy(int, float, float const*, float*)`. Names that are not Itanium-mangled
/// (`extern "C"` kernels) come back unchanged.
pub fn demangle(name: &str) -> String {
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|sym| sym.demangle().ok())
        .unwrap_or_else(|| name.to_string())
}

/// `{"kernels":[{"name","mangled","grid":[x,y,z],"block":[x,y,z],"warp_instructions",
/// "thread_instructions"}…], "total":{"kernels","warp_instructions","thread_instructions"}}`
pub fn to_json(records: &[KernelRecord]) -> String {
    let mut out = String::from("{\n  \"kernels\": [");
    for (i, r) in records.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            out,
            "{sep}\n    {{\"name\": {}, \"mangled\": {}, \"grid\": [{}, {}, {}], \
             \"block\": [{}, {}, {}], \"warp_instructions\": {}, \"thread_instructions\": {}}}",
            json_string(&r.name),
            json_string(&r.mangled),
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
    fn kernel_names_are_demangled() {
        assert_eq!(
            demangle("_Z5saxpyifPKfPf"),
            "saxpy(int, float, float const*, float*)"
        );
        assert_eq!(
            demangle("_Z15transpose_tiledILb1EEvPKfPfii"),
            "void transpose_tiled<true>(float const*, float*, int, int)"
        );
        assert_eq!(demangle("plain_c_kernel"), "plain_c_kernel");
        assert_eq!(demangle("_Z"), "_Z");
    }

    #[test]
    fn json_lists_kernels_and_totals() {
        let rec = |name: &str, w, t| KernelRecord {
            name: demangle(name),
            mangled: name.to_string(),
            grid: Dim3 { x: 48, y: 1, z: 1 },
            block: Dim3 { x: 256, y: 2, z: 1 },
            stats: KernelStats {
                warp_instructions: w,
                thread_instructions: t,
            },
        };
        let json = to_json(&[rec("_Z5saxpyifPKfPf", 10, 300), rec("a\"b", 5, 7)]);
        assert!(json.contains(r#"{"name": "saxpy(int, float, float const*, float*)", "mangled": "_Z5saxpyifPKfPf", "grid": [48, 1, 1], "block": [256, 2, 1], "warp_instructions": 10, "thread_instructions": 300}"#), "{json}");
        assert!(json.contains(r#""name": "a\"b", "mangled": "a\"b""#));
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
