//! The fatbinary reader on real nvcc 11.8 output (the committed test programs).

mod common;

use std::process::Command;

use cudart::fatbin::{EntryKind, FatBinary, FatbinError};

fn section(name: &str) -> Vec<u8> {
    let file = std::fs::read(common::program(name)).expect("committed test program");
    common::elf_section(&file, ".nv_fatbin").expect(".nv_fatbin section")
}

/// The entries of every container in the program's `.nv_fatbin` section.
fn entries_of(bytes: &[u8]) -> Vec<cudart::fatbin::Entry<'_>> {
    FatBinary::parse_section(bytes)
        .expect("parse .nv_fatbin")
        .into_iter()
        .flat_map(|fb| fb.entries)
        .collect()
}

fn select(bytes: &[u8], target: u32) -> Result<(u32, String), FatbinError> {
    let mut last_err = None;
    for fb in FatBinary::parse_section(bytes)? {
        match fb.select_ptx(target) {
            Ok(choice) => return Ok((choice.entry.arch, choice.entry.ptx_text()?)),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.expect("at least one container"))
}

#[test]
fn default_build_has_compressed_compute_70_ptx() {
    let bytes = section("kernels");
    let entries = entries_of(&bytes);
    let ptx: Vec<_> = entries
        .iter()
        .filter(|e| e.kind == EntryKind::Ptx)
        .collect();
    assert_eq!(ptx.len(), 1);
    assert_eq!(ptx[0].arch, 70);
    assert!(
        ptx[0].is_compressed(),
        "nvcc 11.8 compresses PTX by default"
    );
    let text = ptx[0].ptx_text().unwrap();
    assert!(text.contains(".target sm_70"));
    assert!(text.contains(".entry _Z4axpyifPKfPf("), "{text}");
    assert!(text.contains(".entry _Z5countPi("));
    assert_eq!(
        text.len() + 1,
        ptx[0].uncompressed_size as usize,
        "text plus its NUL"
    );
    assert!(entries
        .iter()
        .any(|e| e.kind == EntryKind::Cubin && e.arch == 70 && !e.is_compressed()));
}

#[test]
fn compress_all_cubins_expand_to_elf() {
    let bytes = section("kernels_compressed");
    let cubins: Vec<_> = entries_of(&bytes)
        .into_iter()
        .filter(|e| e.kind == EntryKind::Cubin)
        .collect();
    assert!(!cubins.is_empty());
    for cubin in cubins {
        assert!(cubin.is_compressed());
        let elf = cubin.contents().unwrap();
        assert_eq!(elf.len(), cubin.uncompressed_size as usize);
        assert_eq!(&elf[..4], b"\x7fELF");
    }
    assert_eq!(
        select(&bytes, 70).unwrap().1,
        select(&section("kernels"), 70).unwrap().1
    );
}

#[test]
fn picks_highest_virtual_arch_not_above_the_target() {
    let bytes = section("kernels_multi_ptx");
    let archs: Vec<u32> = entries_of(&bytes)
        .iter()
        .filter(|e| e.kind == EntryKind::Ptx)
        .map(|e| e.arch)
        .collect();
    assert_eq!(archs.len(), 3, "{archs:?}");
    assert_eq!(select(&bytes, 70).unwrap().0, 70);
    assert_eq!(select(&bytes, 75).unwrap().0, 70);
    assert_eq!(select(&bytes, 86).unwrap().0, 80);
    assert_eq!(select(&bytes, 60).unwrap().0, 52);
    assert!(select(&bytes, 52).unwrap().1.contains(".target sm_52"));
}

#[test]
fn machine_code_only_is_a_clear_error() {
    let err = select(&section("kernels_sass_only"), 70).unwrap_err();
    assert_eq!(
        err,
        FatbinError::NoPtx {
            cubin_archs: vec![70]
        }
    );
    assert!(err
        .to_string()
        .contains("-gencode arch=compute_70,code=compute_70"));
}

#[test]
fn every_truncation_of_a_real_container_is_an_error_not_a_panic() {
    let bytes = section("kernels");
    for cut in 0..bytes.len().min(4096) {
        if let Ok(fb) = FatBinary::parse(&bytes[..cut]) {
            for e in &fb.entries {
                let _ = e.contents();
            }
        }
    }
    for flip in (0..bytes.len()).step_by(7) {
        let mut corrupt = bytes.clone();
        corrupt[flip] ^= 0x5a;
        if let Ok(fb) = FatBinary::parse(&corrupt) {
            for e in &fb.entries {
                let _ = e.ptx_text();
            }
        }
    }
}

#[test]
fn extracted_ptx_matches_cuobjdump() {
    if !common::tool_available("cuobjdump") {
        eprintln!("skipped: cuobjdump not installed");
        return;
    }
    for name in ["kernels", "kernels_compressed", "kernels_multi_ptx"] {
        let out = Command::new("cuobjdump")
            .arg("-ptx")
            .arg(common::program(name))
            .output()
            .unwrap();
        let listing = String::from_utf8_lossy(&out.stdout).into_owned();
        let bytes = section(name);
        let ptx: Vec<_> = entries_of(&bytes)
            .into_iter()
            .filter(|e| e.kind == EntryKind::Ptx)
            .collect();
        assert!(!ptx.is_empty());
        for entry in ptx {
            let text = entry.ptx_text().unwrap();
            assert!(
                listing.contains(text.trim()),
                "{name}: compute_{} PTX differs from cuobjdump's",
                entry.arch
            );
        }
    }
}
