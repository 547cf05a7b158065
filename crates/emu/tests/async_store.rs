//! `st.async` and `red.async` (PTX ISA 8.1, sm_90): stores and reductions into the
//! partner CTA's shared memory that complete on its mbarrier
//! (`data/modern/async_store.sm90.ptx`), every type, vector form and operation against a
//! CPU model of the same exchange; the located errors; the decoder's refusals and the
//! `.target` rule.

use emu::{Emulator, KernelRef, LaunchConfig};

fn modern_data(name: &str) -> String {
    let path = format!("{}/tests/data/modern/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn params(emu: &Emulator, k: KernelRef, values: &[u64]) -> Vec<u8> {
    let ps = emu.kernel_params(k).expect("kernel");
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; size];
    for (p, v) in ps.iter().zip(values) {
        let o = p.offset as usize;
        buf[o..o + p.size as usize].copy_from_slice(&v.to_le_bytes()[..p.size as usize]);
    }
    buf
}

mod async_store_model;
use async_store_model::{expected, WORDS_PER_CTA};

#[test]
fn stores_and_reductions_land_in_the_partner_and_complete_its_mbarrier() {
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx("async_store.ptx", &modern_data("async_store.sm90.ptx"))
        .unwrap_or_else(|e| panic!("{e}"));
    let k = emu.kernel(m, "exchange").unwrap();
    let ctas = 4u32;
    let words = WORDS_PER_CTA * ctas as usize;
    let out = emu
        .memory
        .alloc(4 * words as u64, emu::AllocKind::Device)
        .unwrap();
    emu.memory.memset(out, 0xEE, 4 * words as u64).unwrap();
    let p = params(&emu, k, &[out]);
    emu.run(k, LaunchConfig::linear(ctas, 32), &p)
        .unwrap_or_else(|e| panic!("{e}"));
    for c in 0..ctas {
        let got: Vec<u32> = (0..WORDS_PER_CTA)
            .map(|i| {
                emu.memory
                    .read_uint(out + 4 * (WORDS_PER_CTA * c as usize + i) as u64, 4)
                    .unwrap() as u32
            })
            .collect();
        let want = expected(c);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "CTA {c} word {i} (byte {})", 4 * i);
        }
    }
}

#[test]
fn a_destination_outside_shared_memory_or_an_uninitialised_barrier_is_located() {
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx("async_store.ptx", &modern_data("async_store.sm90.ptx"))
        .unwrap();
    let out = emu.memory.alloc(64, emu::AllocKind::Device).unwrap();
    for (kernel, want) in [
        ("to_global", "st.async: address 0x"),
        (
            "no_barrier",
            "mbarrier: tx-count change on an mbarrier that is not initialised",
        ),
    ] {
        let k = emu.kernel(m, kernel).unwrap();
        let p = params(&emu, k, &[out]);
        let e = emu
            .run(k, LaunchConfig::linear(2, 32), &p)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want) && e.contains(kernel), "{kernel}: {e}");
        assert!(e.contains("async_store.ptx:"), "{kernel}: {e}");
    }
    let k = emu.kernel(m, "to_global").unwrap();
    let p = params(&emu, k, &[out]);
    let e = emu
        .run(k, LaunchConfig::linear(2, 32), &p)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("is not in the shared memory of the cluster"),
        "{e}"
    );
}

fn decode(target: &str, body: &str) -> Result<String, String> {
    let text = format!(
        ".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<40>;\n{body}\nret;\n}}\n"
    );
    let mut emu = Emulator::new();
    emu.load_ptx("d.ptx", &text).map_err(|e| e.to_string())?;
    Ok(text)
}

#[test]
fn the_decoder_takes_every_listed_form_and_refuses_the_rest_at_its_line() {
    let regs = ".reg .b64 %rd<8>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<4>;\n";
    let ct = "mbarrier::complete_tx::bytes";
    let mut ok = Vec::new();
    for (ty, v1, v2, v4) in [
        ("b32", "%r1", "{%r1, %r2}", Some("{%r1, %r2, %r3, %r4}")),
        ("u32", "%r1", "{%r1, %r2}", Some("{%r1, %r2, %r3, %r4}")),
        ("s32", "%r1", "{%r1, %r2}", Some("{%r1, %r2, %r3, %r4}")),
        ("f32", "%f1", "{%f1, %f2}", Some("{%f1, %f2, %f3, %f0}")),
        ("b64", "%rd1", "{%rd1, %rd2}", None),
        ("u64", "%rd1", "{%rd1, %rd2}", None),
        ("s64", "%rd1", "{%rd1, %rd2}", None),
        ("f64", "%fd1", "{%fd1, %fd2}", None),
    ] {
        ok.push(format!(
            "st.async.shared::cluster.{ct}.{ty} [%r10], {v1}, [%r11];"
        ));
        ok.push(format!(
            "st.async.weak.shared::cluster.{ct}.v2.{ty} [%r10], {v2}, [%r11];"
        ));
        ok.push(format!("st.async.cluster.{ct}.{ty} [%rd5], {v1}, [%rd6];"));
        if let Some(v4) = v4 {
            ok.push(format!("st.async.{ct}.v4.{ty} [%rd5], {v4}, [%rd6];"));
        }
    }
    for (op, tys) in [
        ("inc", &["u32"][..]),
        ("dec", &["u32"]),
        ("min", &["u32", "s32"]),
        ("max", &["u32", "s32"]),
        ("and", &["b32"]),
        ("or", &["b32"]),
        ("xor", &["b32"]),
        ("add", &["u32", "s32", "u64", "s64"]),
    ] {
        for ty in tys {
            let b = if ty.ends_with("64") { "%rd1" } else { "%r1" };
            ok.push(format!(
                "red.async.relaxed.cluster.shared::cluster.{ct}.{op}.{ty} [%r10], {b}, [%r11];"
            ));
        }
    }
    for inst in &ok {
        decode("sm_90", &format!("{regs}{inst}")).unwrap_or_else(|e| panic!("{inst}: {e}"));
        // Below sm_90 the module is refused at the instruction's line (line 10).
        let e = decode("sm_80", &format!("{regs}{inst}")).unwrap_err();
        let name = if inst.starts_with("st.") {
            "st.async"
        } else {
            "red.async"
        };
        assert!(
            e.contains("d.ptx:10:")
                && e.contains(&format!(
                    "{name} requires .target sm_90 or higher; the module's .target is sm_80"
                )),
            "{inst}: {e}"
        );
    }
    for (inst, want) in [
        (format!("st.async.shared::cluster.{ct}.b16 [%r10], %r1, [%r11];"), ".b16"),
        (format!("st.async.shared::cluster.{ct}.v8.b32 [%r10], {{%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8}}, [%r11];"), "takes .v2 or .v4 only"),
        (format!("st.async.shared::cta.{ct}.b32 [%r10], %r1, [%r11];"), "writes .shared::cluster memory, not .shared::cta"),
        (format!("st.async.global.{ct}.b32 [%rd1], %r1, [%r11];"), "not .global"),
        ("st.async.shared::cluster.b32 [%r10], %r1, [%r11];".to_string(), "needs .mbarrier::complete_tx::bytes"),
        ("st.async.mmio.release.sys.global.b32 [%rd1], %r1;".to_string(), "is not supported"),
        (format!("st.async.release.cluster.shared::cluster.{ct}.b32 [%r10], %r1, [%r11];"), "release"),
        (format!("st.async.shared::cluster.{ct}.b32 [%r10], %r1;"), "operand"),
        (format!("st.async.weak.cluster.shared::cluster.{ct}.b32 [%r10], %r1, [%r11];"), "not both"),
        (format!("st.async.shared::cluster.{ct}.v4.b64 [%r10], {{%rd1, %rd2, %rd3, %rd4}}, [%r11];"), "at most 128 bits"),
        (format!("red.async.shared::cluster.{ct}.add.u32 [%r10], %r1, [%r11];"), "needs .relaxed.cluster"),
        (format!("red.async.relaxed.cluster.shared::cluster.{ct}.min.u64 [%r10], %rd1, [%r11];"), ".u64"),
        (format!("red.async.relaxed.gpu.shared::cluster.{ct}.add.u32 [%r10], %r1, [%r11];"), "needs .relaxed.cluster"),
        (format!("red.async.relaxed.cluster.shared::cluster.{ct}.add.f32 [%r10], %f1, [%r11];"), ".f32"),
        (format!("red.async.relaxed.cluster.shared::cluster.{ct}.inc.s32 [%r10], %r1, [%r11];"), ".s32"),
        (format!("red.async.relaxed.cluster.shared::cluster.{ct}.and.b64 [%r10], %rd1, [%r11];"), ".b64"),
        (format!("red.async.relaxed.cluster.shared::cluster.{ct}.min.s64 [%r10], %rd1, [%r11];"), ".s64"),
        (format!("red.async.relaxed.cluster.shared::cluster.{ct}.exch.b32 [%r10], %r1, [%r11];"), "needs .add"),
        ("red.async.relaxed.cluster.shared::cluster.add.u32 [%r10], %r1, [%r11];".to_string(), "needs .mbarrier::complete_tx::bytes"),
    ] {
        let e = decode("sm_90", &format!("{regs}{inst}")).unwrap_err();
        assert!(e.contains(want) && e.contains("d.ptx:10:"), "{inst}: {e}");
    }
}
