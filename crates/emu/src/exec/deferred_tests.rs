//! Deferred global accesses (`Launch::cta_private_executor` with `defer_global`,
//! `Launch::complete_access`): a store, an atomic or a reduction executed on such an
//! executor touches no memory and writes no result register at issue; performed later
//! on the launch, it leaves registers, memory, stray-access warnings and errors exactly
//! as executing the instruction on the launch does.

use super::*;
use crate::{AllocKind, Emulator, LaunchConfig};

/// `k(p)`: every lane stores, atomically combines and reduces words of the 1 KiB buffer
/// at `p`: a plain store of its lane id plus 100, a vector store of two words, a byte
/// store, an `atom.add` on one shared counter (old values differ per lane), a CAS that
/// only one lane wins, a 64-bit exchange, a `red.add.f32`, then a load of the counter.
/// Lanes of `%tid.x == bad` first move their address 1 TiB away (a fault) or, for
/// `bad + 64`, by 2 bytes (a misaligned store).
fn kernel(bad: u32, access: &str) -> String {
    format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry k(.param .u64 p)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n.reg .f32 %f<4>;\n\
         ld.param.u64 %rd1, [p];\n\
         mov.u32 %r1, %tid.x;\n\
         mul.wide.u32 %rd2, %r1, 4;\nadd.u64 %rd3, %rd1, %rd2;\n\
         setp.eq.u32 %p1, %r1, {bad};\n@%p1 add.u64 %rd3, %rd3, 1099511627776;\n\
         add.u32 %r9, %r1, 64;\nsetp.eq.u32 %p2, %r9, {bad};\n@%p2 add.u64 %rd3, %rd3, 2;\n\
         add.u32 %r2, %r1, 100;\n\
         {access}\
         mul.wide.u32 %rd4, %r1, 8;\nadd.u64 %rd5, %rd1, %rd4;\nadd.u64 %rd5, %rd5, 128;\n\
         st.global.v2.u32 [%rd5+0], {{%r1, %r2}};\n\
         add.u64 %rd6, %rd1, %rd2;\nst.global.u8 [%rd6+512], %r2;\n\
         atom.global.add.u32 %r3, [%rd1+640], %r2;\n\
         atom.global.cas.b32 %r4, [%rd1+644], 0, %r2;\n\
         cvt.u64.u32 %rd7, %r1;\natom.global.exch.b64 %rd8, [%rd1+648], %rd7;\n\
         cvt.rn.f32.u32 %f1, %r1;\nred.global.add.f32 [%rd1+656], %f1;\n\
         ld.global.u32 %r5, [%rd1+640];\n\
         ret;\n}}\n"
    )
}

const STORE: &str = "st.global.u32 [%rd3], %r2;\n";
const ATOM: &str = "atom.global.max.u32 %r8, [%rd3], %r2;\n";
const RED: &str = "red.global.or.b32 [%rd3], %r2;\n";

const BYTES: u64 = 1024;

/// An emulator with `kernel(bad, access)` loaded and a 1 KiB buffer of known bytes.
fn emulator(bad: u32, access: &str) -> (Emulator, crate::KernelRef, u64) {
    let mut emu = Emulator::new();
    let m = emu.load_ptx("k.ptx", &kernel(bad, access)).unwrap();
    let k = emu.kernel(m, "k").unwrap();
    let p = emu.memory.alloc(BYTES, AllocKind::Device).unwrap();
    for i in 0..BYTES / 4 {
        emu.memory
            .write_uint(p + 4 * i, 4, i * 0x0001_0003 % 977)
            .unwrap();
    }
    // The CAS's word starts at 0, so that one lane wins.
    emu.memory.write_uint(p + 644, 4, 0).unwrap();
    (emu, k, p)
}

fn buffer(emu: &Emulator, p: u64) -> Vec<u8> {
    let mut b = vec![0; BYTES as usize];
    emu.memory.read(p, &mut b).unwrap();
    b
}

fn regs(c: &Cta) -> Vec<u64> {
    c.warps[0].frames[0].regs.clone()
}

/// Runs warp 0 of CTA 0 (32 threads) to its end on the launch (`direct`) or on an
/// executor of deferred accesses, each deferred access performed on the launch right
/// after it issues (what an SM's turn does). Returns the buffer afterwards, the error
/// text if a step failed, and how many accesses were deferred.
fn run(bad: u32, access: &str, deferred: bool) -> (Vec<u8>, Option<String>, usize) {
    let (mut emu, k, p) = emulator(bad, access);
    let params = p.to_le_bytes();
    let mut n = 0;
    let error = {
        let mut launch = emu.launch(k, LaunchConfig::linear(1, 32), &params).unwrap();
        let mut stand_in = DeviceStandIn::default();
        let mut executor = launch.cta_private_executor(&mut stand_in, true);
        let mut cta = launch.start_cta(0).unwrap();
        let mut error = None;
        while cta.warps[0].status != WarpStatus::Exited {
            if !deferred {
                if let Err(e) = launch.execute(&mut cta, 0) {
                    error = Some(e.to_string());
                    break;
                }
                continue;
            }
            if !executor.next_is_cta_private(&mut cta, 0) {
                // The exit of a warp whose lanes all returned: on the launch.
                launch.execute(&mut cta, 0).unwrap();
                continue;
            }
            let before = regs(&cta);
            let step = executor.execute(&mut cta, 0).expect("issue never faults");
            let Some(access) = DeferredAccess::of(step) else {
                continue;
            };
            n += 1;
            let values = step.deferred_values.clone();
            // Nothing performed at issue: no result register written (the executor's
            // memory is empty, so nothing else could be).
            if access.exec_mask != 0 {
                assert_eq!(before, regs(&cta), "a deferred access wrote registers");
            }
            if let Err(e) = launch.complete_access(&mut cta, 0, &access, &values) {
                error = Some(e.to_string());
                break;
            }
        }
        error
    };
    (buffer(&emu, p), error, n)
}

#[test]
fn deferred_stores_atomics_and_reductions_leave_memory_as_executing_them_does() {
    for access in [STORE, ATOM, RED] {
        let direct = run(u32::MAX, access, false);
        let deferred = run(u32::MAX, access, true);
        assert_eq!(direct.1, None);
        // Every global access of the kernel was deferred: `access`, two stores, three
        // atomics, a reduction and the final load.
        assert_eq!(deferred.2, 8, "{access}");
        assert_eq!(direct, (deferred.0.clone(), None, 0), "{access}");
        // The kernel did something: the counter, the CAS and the float sum changed.
        let (e0, _, p0) = emulator(u32::MAX, access);
        let initial = buffer(&e0, p0);
        let word = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        for at in [640, 644, 656] {
            assert_ne!(
                word(&deferred.0, at),
                word(&initial, at),
                "{access} at {at}"
            );
        }
    }
}

#[test]
fn a_deferred_access_faults_when_performed_with_the_instructions_error() {
    // Lane 5 far outside the buffer, or lane 5 misaligned (`bad` = 69), in a store, an
    // atomic and a reduction: the same error text as executing it, naming it.
    for (access, text) in [
        (STORE, "st.global.u32"),
        (ATOM, "atom.global.max.u32"),
        (RED, "red.global.or.b32"),
    ] {
        for bad in [5, 69] {
            let direct = run(bad, access, false);
            let deferred = run(bad, access, true);
            let error = direct.1.clone().expect("the kernel faults");
            assert!(error.contains(text), "{error}");
            // Lanes before the faulting one were performed, on both paths alike.
            assert_eq!(direct.0, deferred.0, "{access} {bad}");
            assert_eq!(direct.1, deferred.1, "{access} {bad}");
        }
    }
}
