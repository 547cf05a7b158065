//! The parameter layout of each kernel (`.entry`) in a PTX module: where each argument
//! goes in the raw parameter buffer a launch passes to the device.
//!
//! `cudaLaunchKernel` receives only `void **args`, one pointer per argument, with no sizes;
//! the sizes and alignments come from the kernel's PTX signature. Each parameter sits at
//! the next offset aligned to its `.align` (or its element size) and occupies element size
//! × array length bytes, as the PTX ABI lays out the kernel parameter space.

use std::collections::HashMap;

use ptx::ast::{FunctionKind, ModuleItem, Param};
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSlot {
    pub offset: usize,
    pub size: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelSignature {
    pub params: Vec<ParamSlot>,
    /// Bytes of the whole parameter buffer.
    pub size: usize,
}

#[derive(Debug, Error)]
pub enum SignatureError {
    #[error("the program's PTX does not parse: {0}")]
    Parse(String),
    #[error("kernel {kernel}: parameter {param} has an unsized array dimension")]
    UnsizedParam { kernel: String, param: String },
}

/// Signatures of every kernel in `ptx`, by mangled name.
pub fn kernel_signatures(
    ptx_text: &str,
) -> Result<HashMap<String, KernelSignature>, SignatureError> {
    let module =
        ptx::parse("fatbinary.ptx", ptx_text).map_err(|e| SignatureError::Parse(e.to_string()))?;
    let mut out = HashMap::new();
    for item in &module.items {
        if let ModuleItem::Function(f) = item {
            if f.kind == FunctionKind::Entry {
                out.insert(f.name.name.clone(), signature(&f.name.name, &f.params)?);
            }
        }
    }
    Ok(out)
}

fn signature(kernel: &str, params: &[Param]) -> Result<KernelSignature, SignatureError> {
    let mut slots = Vec::with_capacity(params.len());
    let mut offset = 0usize;
    for p in params {
        let elem = (p.ty.bits() as usize).div_ceil(8).max(1);
        let mut count = 1usize;
        for dim in &p.array {
            let n = dim.ok_or_else(|| SignatureError::UnsizedParam {
                kernel: kernel.to_string(),
                param: p.name.name.clone(),
            })?;
            count = count.saturating_mul(usize::try_from(n).unwrap_or(usize::MAX));
        }
        let align = p.align.map_or(elem, |a| a as usize).max(1);
        offset = offset.next_multiple_of(align);
        let size = elem.saturating_mul(count);
        slots.push(ParamSlot { offset, size });
        offset = offset.saturating_add(size);
    }
    Ok(KernelSignature {
        params: slots,
        size: offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_pointers_and_aligned_structs() {
        let ptx = r#"
.version 7.8
.target sm_70
.address_size 64
.visible .entry _Z1kicPfS_(
    .param .u32 _Z1k_param_0,
    .param .u8 _Z1k_param_1,
    .param .u64 _Z1k_param_2,
    .param .align 8 .b8 _Z1k_param_3[24],
    .param .f32 _Z1k_param_4
)
{
    ret;
}
"#;
        let sigs = kernel_signatures(ptx).unwrap();
        let sig = &sigs["_Z1kicPfS_"];
        let got: Vec<(usize, usize)> = sig.params.iter().map(|p| (p.offset, p.size)).collect();
        assert_eq!(got, vec![(0, 4), (4, 1), (8, 8), (16, 24), (40, 4)]);
        assert_eq!(sig.size, 44);
    }
}
