//! Global stores, atomics and reductions issued in the parallel phase with their memory
//! accesses deferred to their SM's turn (`emu::Launch::complete_access`,
//! `docs/parallel.md`): the old values every atomic returns, the memory they leave, the
//! statistics and the first fault are those of one thread, for kernels whose atomics of
//! every SM hit the same words in the same cycles.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::TimingSimulator;

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// `atoms(c, out)`: every thread (global id `g`) adds `g * 7 % 13 + 1` to `c[0]`,
/// exchanges `g + 1` into `c[1]` (its old value is the previous exchanger's: the SM
/// order),
/// takes the maximum of `c[2]` with `old ^ g`, adds `g` to the 64-bit `c[4..6]`,
/// increments `c[6]` modulo 1000, reduces `c[7]` with `xor` and `c[8]` with an `add` of
/// the exchanged value's low bits, CASes `c[9]` from 0 to `g + 1` (one winner), then stores
/// its old values as two vector stores to `out[4 g..4 g + 4]` and one byte to
/// `out_bytes[g]`, so that every word left depends on the order of every SM's atomics.
fn atoms_ptx() -> String {
    format!(
        "{HEADER}.visible .entry atoms(.param .u64 c, .param .u64 out)\n{{\n\
         .reg .pred %p<3>;\n.reg .b32 %r<30>;\n.reg .b64 %rd<20>;\n\
         ld.param.u64 %rd1, [c];\nld.param.u64 %rd2, [out];\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\n\
         mad.lo.u32 %r4, %r2, %r3, %r1;\n\
         mul.lo.u32 %r5, %r4, 7;\nrem.u32 %r5, %r5, 13;\nadd.u32 %r5, %r5, 1;\n\
         atom.global.add.u32 %r6, [%rd1], %r5;\n\
         add.u32 %r17, %r4, 1;\n\
         atom.global.exch.b32 %r7, [%rd1+4], %r17;\n\
         xor.b32 %r8, %r6, %r4;\n\
         atom.global.max.u32 %r9, [%rd1+8], %r8;\n\
         cvt.u64.u32 %rd3, %r4;\n\
         atom.global.add.u64 %rd4, [%rd1+16], %rd3;\n\
         atom.global.inc.u32 %r10, [%rd1+24], 999;\n\
         red.global.xor.b32 [%rd1+28], %r6;\n\
         and.b32 %r11, %r7, 15;\n\
         red.global.add.u32 [%rd1+32], %r11;\n\
         atom.global.cas.b32 %r12, [%rd1+36], 0, %r17;\n\
         cvt.u32.u64 %r13, %rd4;\n\
         mul.wide.u32 %rd5, %r4, 16;\nadd.u64 %rd6, %rd2, %rd5;\n\
         st.global.v2.u32 [%rd6], {{%r6, %r7}};\n\
         add.u32 %r14, %r9, %r10;\nxor.b32 %r14, %r14, %r13;\n\
         st.global.v2.u32 [%rd6+8], {{%r14, %r12}};\n\
         ld.global.u32 %r16, [%rd1];\n\
         cvt.u64.u32 %rd7, %r4;\nadd.u64 %rd8, %rd2, %rd7;\n\
         st.global.u8 [%rd8+49152], %r16;\n\
         ret;\n}}\n"
    )
}

const CTAS: u32 = 48;
const BLOCK: u32 = 64;

/// `atoms` on `threads` threads on config `gpu` under `design` (`None`: the config's
/// own): the statistics without wall-clock figures, and both buffers afterwards.
fn run_atoms(gpu: &str, design: Option<&str>, threads: usize) -> (String, Vec<u32>, Vec<u32>) {
    let (mut emu, k, _) = load(&atoms_ptx(), "atoms");
    let c = alloc_u32(&mut emu, &[0; 16]);
    let out_words = (CTAS * BLOCK * 4 + CTAS * BLOCK / 4) as usize;
    let out = alloc_u32(&mut emu, &vec![0; out_words]);
    let p = params(&emu, k, &[c, out]);
    let overrides: Vec<String> = design
        .map(|d| format!("register_file.design=\"{d}\""))
        .into_iter()
        .collect();
    let overrides: Vec<&str> = overrides.iter().map(String::as_str).collect();
    let cfg = config(gpu, &overrides);
    let info = compiled_info(&emu, k, &cfg);
    let mut sim = TimingSimulator::new(cfg);
    sim.set_threads(threads).expect("threads start");
    let mut stats = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(CTAS, BLOCK), &p, &info)
        .unwrap_or_else(|e| panic!("{gpu} {design:?} on {threads} threads: {e}"));
    stats.simulation = Default::default();
    (
        format!("{stats:?}"),
        read_u32(&emu, c, 16),
        read_u32(&emu, out, out_words),
    )
}

#[test]
fn racing_atomics_of_every_sm_return_the_one_thread_old_values() {
    let n = u64::from(CTAS * BLOCK);
    let runs: Vec<(&str, Option<&str>)> = DESIGNS
        .iter()
        .map(|d| ("gtx480", Some(*d)))
        .chain([("qv100", None), ("h100", None)])
        .collect();
    for (gpu, design) in runs {
        let one = run_atoms(gpu, design, 1);
        // The kernel ran: the counters hold what every thread added, whatever the order.
        let c = &one.1;
        let sum: u64 = (0..n).map(|g| g * 7 % 13 + 1).sum();
        assert_eq!(u64::from(c[0]), sum, "{gpu} {design:?}");
        assert_eq!(
            u64::from(c[4]) | u64::from(c[5]) << 32,
            n * (n - 1) / 2,
            "{gpu} {design:?}"
        );
        assert_eq!(c[6], (n % 1000) as u32, "{gpu} {design:?}");
        // Exactly one thread won the CAS (its old value 0), and the word holds its
        // `g + 1`; the exchanges returned 0 and every `g + 1` but the last, all distinct.
        let winners: Vec<usize> = (0..n as usize).filter(|&g| one.2[4 * g + 3] == 0).collect();
        assert_eq!(winners.len(), 1, "{gpu} {design:?}");
        assert_eq!(c[9] as usize, winners[0] + 1, "{gpu} {design:?}");
        let mut exchanged: Vec<u32> = (0..n as usize).map(|g| one.2[4 * g + 1]).collect();
        exchanged.sort_unstable();
        exchanged.dedup();
        assert_eq!(exchanged.len(), n as usize, "{gpu} {design:?}");
        for threads in [2, 4] {
            let many = run_atoms(gpu, design, threads);
            assert!(
                one.1 == many.1 && one.2 == many.2,
                "{gpu} {design:?}: {threads} threads: memory differs"
            );
            assert!(
                one.0 == many.0,
                "{gpu} {design:?}: {threads} threads: statistics differ"
            );
        }
    }
}

/// `fault(out)`: thread `global_thread` moves its address into `out` by `offset` bytes
/// (far outside it, or misaligned) before `access`, where the others access their own
/// word of `out`; thread `shared_thread` first stores far outside shared memory (a
/// CTA-private fault).
fn fault_ptx(shared_thread: u32, global_thread: u32, offset: u64, access: &str) -> String {
    format!(
        "{HEADER}.visible .entry fault(.param .u64 out)\n{{\n\
         .reg .pred %p<3>;\n.reg .b16 %h<2>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\n\
         mov.u32 %r3, %ntid.x;\nmad.lo.u32 %r4, %r2, %r3, %r1;\n\
         mul.wide.u32 %rd2, %r4, 4;\nadd.u64 %rd3, %rd1, %rd2;\n\
         setp.eq.u32 %p1, %r4, {shared_thread};\n@%p1 st.shared.u32 [1048576], %r4;\n\
         setp.eq.u32 %p2, %r4, {global_thread};\n@%p2 add.u64 %rd3, %rd3, {offset};\n\
         {access}ret;\n}}\n"
    )
}

fn fault_error(
    (shared_thread, global_thread, offset): (u32, u32, u64),
    access: &str,
    threads: usize,
) -> String {
    let ptx = fault_ptx(shared_thread, global_thread, offset, access);
    let (mut emu, k, info) = load(&ptx, "fault");
    let out = alloc_u32(&mut emu, &[0; 16 * 64]);
    let p = params(&emu, k, &[out]);
    let mut sim = TimingSimulator::new(config("gtx480", &[]));
    sim.set_threads(threads).expect("threads start");
    match sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(16, 64), &p, &info) {
        Ok(_) => panic!("the faulting kernel ran to its end on {threads} threads"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_first_fault_of_a_deferred_atomic_or_store_is_the_one_thread_fault() {
    let none = u32::MAX;
    let far = 1u64 << 40;
    for (access, text) in [
        (
            "atom.global.add.u32 %r5, [%rd3], 1;\n",
            "atom.global.add.u32",
        ),
        ("red.global.add.u32 [%rd3], 1;\n", "red.global.add.u32"),
        (
            "atom.global.cas.b32 %r5, [%rd3], 0, %r4;\n",
            "atom.global.cas.b32",
        ),
        (
            "cvt.u16.u32 %h1, %r4;\nst.global.v2.u16 [%rd3], {%h1, %h1};\n",
            "st.global.v2.u16",
        ),
    ] {
        // A global fault alone (far, or misaligned), then with a CTA-private one on a
        // later SM and on an earlier one.
        for (threads_at, names) in [
            ((none, 259, far), "CTA (4, 0, 0)"),
            ((none, 259, 2), "CTA (4, 0, 0)"),
            ((576, 259, far), "CTA ("),
            ((130, 600, far), "CTA ("),
        ] {
            let one = fault_error(threads_at, access, 1);
            assert!(one.contains(names), "{one}");
            if threads_at.0 == none {
                assert!(one.contains(text), "{one}");
            } else {
                assert!(one.contains(text) || one.contains("st.shared"), "{one}");
            }
            for threads in [2, 4, 8] {
                assert_eq!(
                    fault_error(threads_at, access, threads),
                    one,
                    "{access}: {threads} threads"
                );
            }
        }
    }
}
