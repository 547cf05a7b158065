//! The two sonames one build of this library serves: `libcudart.so.11.0` (CUDA 11.x
//! programs) and `libcudart.so.12` (CUDA 12.x programs).
//!
//! The cdylib is linked as `libcudart.so.11.0` (`build.rs`). For a CUDA 12 program,
//! `regsim run` writes a copy whose version node and soname say `libcudart.so.12`
//! (`regsim`'s `elf::retag_cudart`); the copy also carries a rewritten [`MARK`], which is how the code inside it
//! knows which API it serves (CUDA 12's `cudaDeviceProp` layout and version numbers).
//! Programs of either version that use the driver API load the same file as
//! `libcuda.so.1`, so both APIs share one device.

/// The soname and symbol version the cdylib is linked with.
pub const CUDART_11: &str = "libcudart.so.11.0";
/// The soname and symbol version CUDA 12 programs import.
pub const CUDART_12: &str = "libcudart.so.12";
/// The soname of the driver API library.
pub const LIBCUDA: &str = "libcuda.so.1";

/// The marker's text in the linked library, and what the retagging turns it into (same
/// length). Only the static below holds these bytes in the library: the retagging code
/// lives in the `regsim` binary, and [`api_major`] reads one byte.
pub const MARK_11: &[u8; 40] = b"regsim:cudart-soname=libcudart.so.11.0\0\0";
pub const MARK_12: &[u8; 40] = b"regsim:cudart-soname=libcudart.so.12\0\0\0\0";
/// The byte where the two markers differ (`1` of `11.0`, `2` of `12`).
const MARK_MAJOR_DIGIT: usize = 35;

/// Kept in the library's read-only data, where the retagging finds and rewrites it.
#[used]
static MARK: [u8; 40] = *MARK_11;

/// The CUDA major version whose API this copy of the library serves.
pub fn api_major() -> u32 {
    // A volatile load: the byte in the file may differ from what the compiler saw.
    // SAFETY: the index is in bounds of a static.
    let digit = unsafe { std::ptr::read_volatile(MARK.as_ptr().add(MARK_MAJOR_DIGIT)) };
    if digit == MARK_12[MARK_MAJOR_DIGIT] {
        12
    } else {
        11
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unpatched_library_serves_cuda_11() {
        assert_eq!(api_major(), 11);
    }

    #[test]
    fn the_markers_differ_only_in_the_version() {
        assert_eq!(MARK_11.len(), MARK_12.len());
        assert_ne!(MARK_11[MARK_MAJOR_DIGIT], MARK_12[MARK_MAJOR_DIGIT]);
        assert_eq!(MARK_11[..MARK_MAJOR_DIGIT], MARK_12[..MARK_MAJOR_DIGIT]);
    }
}
