//! Gives every export of the cdylib the symbol version `libcudart.so.11.0`, which
//! nvcc-built programs require (`objdump -T prog` shows `(libcudart.so.11.0) cudaMalloc`).
//!
//! rustc hands the linker its own *anonymous* version script listing the exports. A second,
//! named script cannot be combined with it (GNU ld refuses; rust-lld lets the anonymous one
//! win), but GNU ld's `--default-symver` assigns the soname as the version of every
//! exported symbol that has none. rust-lld (rustc's default linker on x86_64 Linux since
//! 1.90) lacks that option, so this library is linked with GNU ld (`-fuse-ld=bfd`, the last
//! `-fuse-ld` wins). The integration tests check the result with `objdump -T` and by running
//! nvcc-built programs against it.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-fuse-ld=bfd");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcudart.so.11.0");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--default-symver");
    }
}
