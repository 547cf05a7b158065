//! Helpers shared by the integration tests: the committed test programs, their ELF
//! sections, and the cargo-built library under the name programs load.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn program(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs/bin")
        .join(name)
}

/// Bytes of the named section of an ELF64 little-endian file.
pub fn elf_section(file: &[u8], name: &str) -> Option<Vec<u8>> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(file.get(o..o + 2)?.try_into().ok()?) as usize);
    let u32_at = |o: usize| Some(u32::from_le_bytes(file.get(o..o + 4)?.try_into().ok()?) as usize);
    let u64_at = |o: usize| Some(u64::from_le_bytes(file.get(o..o + 8)?.try_into().ok()?) as usize);
    let shoff = u64_at(0x28)?;
    let shentsize = u16_at(0x3a)?;
    let shnum = u16_at(0x3c)?;
    let shstrndx = u16_at(0x3e)?;
    let strtab = u64_at(shoff + shstrndx * shentsize + 0x18)?;
    for i in 0..shnum {
        let sh = shoff + i * shentsize;
        let name_off = strtab + u32_at(sh)?;
        let end = file[name_off..].iter().position(|&b| b == 0)?;
        if &file[name_off..name_off + end] == name.as_bytes() {
            let off = u64_at(sh + 0x18)?;
            let size = u64_at(sh + 0x20)?;
            return file.get(off..off + size).map(<[u8]>::to_vec);
        }
    }
    None
}

/// A directory holding the cargo-built `libcudart.so` as `libcudart.so.11.0`.
pub fn library_dir() -> PathBuf {
    // Integration tests run from target/<profile>/deps, where cargo builds the cdylib
    // (only a plain `cargo build` copies it up to target/<profile>).
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let lib = [deps.join("libcudart.so"), deps.join("../libcudart.so")]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("libcudart.so was not built next to {}", exe.display()));
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cudart-lib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create library dir");
    let link = dir.join("libcudart.so.11.0");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&lib, &link).expect("symlink libcudart.so.11.0");
    dir
}

pub fn run(program_path: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(program_path);
    cmd.env("LD_LIBRARY_PATH", library_dir());
    for var in [
        "REGSIM_GPU",
        "REGSIM_SET",
        "REGSIM_STATS",
        "REGSIM_MODE",
        "REGSIM_SUMMARY",
        "REGSIM_CONFIGS",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run test program")
}

pub fn tool_available(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
