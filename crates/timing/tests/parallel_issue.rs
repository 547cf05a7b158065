//! Multi-threaded stepping with CTA-private instructions issued in the parallel phase
//! (`timing::parallel`, `emu::Launch::cta_private_executor`): statistics, memory, device
//! `printf` output and errors are those of one thread, for a kernel that mixes
//! CTA-private work (shared memory, barriers, arithmetic, local memory) with
//! order-sensitive shared effects (a global atomic whose old values depend on the order
//! of every SM's atomics, stores of those values, `printf` of them), under every design.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::*;
use emu::LaunchConfig;
use timing::TimingSimulator;

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// `mix(out, counter)`: each thread writes `3 * gid` to shared memory, reads its
/// neighbour's after a barrier, adds `(neighbour & 7) + 1` to `*counter` atomically,
/// stores `old ^ neighbour` to `out[gid]`, and every 37th thread prints `gid` and `old`.
fn mix_ptx() -> String {
    format!(
        "{HEADER}.extern .func (.param .b32 status) vprintf(.param .b64 fmt, .param .b64 args);\n\
         .global .align 1 .b8 fmt[13] = {{103, 32, 37, 117, 32, 111, 108, 100, 32, 37, 117, 10, 0}};\n\
         .visible .entry mix(.param .u64 out, .param .u64 counter)\n{{\n\
         .local .align 8 .b8 depot[8];\n.shared .align 4 .b32 tile[64];\n\
         .reg .pred %p<3>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<20>;\n\
         ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [counter];\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\n\
         mad.lo.u32 %r4, %r2, %r3, %r1;\nmul.lo.u32 %r5, %r4, 3;\n\
         mov.u64 %rd9, tile;\nmul.wide.u32 %rd10, %r1, 4;\nadd.u64 %rd11, %rd9, %rd10;\n\
         st.shared.u32 [%rd11], %r5;\nbar.sync 0;\n\
         add.u32 %r9, %r1, 1;\nrem.u32 %r9, %r9, %r3;\nmul.wide.u32 %rd12, %r9, 4;\n\
         add.u64 %rd13, %rd9, %rd12;\nld.shared.u32 %r12, [%rd13];\n\
         and.b32 %r13, %r12, 7;\nadd.u32 %r13, %r13, 1;\n\
         atom.global.add.u32 %r14, [%rd2], %r13;\nxor.b32 %r15, %r14, %r12;\n\
         mul.wide.u32 %rd3, %r4, 4;\nadd.u64 %rd4, %rd1, %rd3;\nst.global.u32 [%rd4], %r15;\n\
         rem.u32 %r16, %r4, 37;\nsetp.ne.u32 %p1, %r16, 0;\n@%p1 bra $L_done;\n\
         mov.u64 %rd5, depot;\ncvta.local.u64 %rd6, %rd5;\n\
         st.local.u32 [%rd5], %r4;\nst.local.u32 [%rd5+4], %r14;\n\
         mov.u64 %rd7, fmt;\ncvta.global.u64 %rd8, %rd7;\n\
         {{\n.param .b64 f0;\nst.param.b64 [f0], %rd8;\n.param .b64 f1;\n\
         st.param.b64 [f1], %rd6;\n.param .b32 st0;\ncall.uni (st0), vprintf, (f0, f1);\n}}\n\
         $L_done:\nret;\n}}\n"
    )
}

/// `fault(out)`: thread `shared_thread` stores far outside shared memory (a CTA-private
/// instruction), thread `global_thread` far outside `out` (global memory); the others
/// store their id.
fn fault_ptx(shared_thread: u32, global_thread: u32) -> String {
    format!(
        "{HEADER}.visible .entry fault(.param .u64 out)\n{{\n\
         .shared .align 4 .b32 tile[64];\n.reg .pred %p<3>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\n\
         mov.u32 %r3, %ntid.x;\nmad.lo.u32 %r4, %r2, %r3, %r1;\n\
         mul.wide.u32 %rd2, %r4, 4;\nadd.u64 %rd3, %rd1, %rd2;\n\
         setp.eq.u32 %p1, %r4, {shared_thread};\n@%p1 st.shared.u32 [1048576], %r4;\n\
         setp.eq.u32 %p2, %r4, {global_thread};\n@%p2 add.u64 %rd3, %rd3, 1099511627776;\n\
         st.global.u32 [%rd3], %r4;\nret;\n}}\n"
    )
}

/// A `printf` sink the test can read back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const CTAS: u32 = 48;
const BLOCK: u32 = 64;

/// `mix` on `threads` threads under `design`: the statistics without wall-clock figures,
/// the output array, the counter and what the kernel printed.
fn run_mix(design: &str, threads: usize) -> (String, Vec<u32>, u32, String) {
    let (mut emu, k, _) = load(&mix_ptx(), "mix");
    let printed = Captured::default();
    emu.printf_sink = Box::new(printed.clone());
    let n = (CTAS * BLOCK) as usize;
    let out = alloc_u32(&mut emu, &vec![0; n]);
    let counter = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out, counter]);
    let cfg = config("gtx480", &[&format!("register_file.design=\"{design}\"")]);
    let info = compiled_info(&emu, k, &cfg);
    let mut sim = TimingSimulator::new(cfg);
    sim.set_threads(threads).expect("threads start");
    let mut stats = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(CTAS, BLOCK), &p, &info)
        .unwrap_or_else(|e| panic!("{design} on {threads} threads: {e}"));
    stats.simulation = Default::default();
    let text = String::from_utf8(printed.0.lock().unwrap().clone()).expect("UTF-8");
    (
        format!("{stats:?}"),
        read_u32(&emu, out, n),
        read_u32(&emu, counter, 1)[0],
        text,
    )
}

#[test]
fn atomics_printf_and_shared_memory_are_identical_on_every_thread_count() {
    for design in DESIGNS {
        let one = run_mix(design, 1);
        // The kernel ran: every thread added at least 1, and every 37th printed.
        assert!(one.2 >= CTAS * BLOCK, "{design}: counter {}", one.2);
        assert_eq!(
            one.3.lines().count(),
            (CTAS * BLOCK).div_ceil(37) as usize,
            "{design}: {}",
            one.3
        );
        for threads in [2, 4] {
            let many = run_mix(design, threads);
            assert!(one == many, "{design}: {threads} threads differ from one");
        }
    }
}

/// The error of `fault` with the two faulting threads on `threads` threads.
fn fault_error(shared_thread: u32, global_thread: u32, threads: usize) -> String {
    let (mut emu, k, info) = load(&fault_ptx(shared_thread, global_thread), "fault");
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
fn the_first_fault_is_the_one_thread_fault() {
    // A CTA-private fault alone (CTA 9), a global one alone (CTA 4), both (the CTA-private
    // one on a later SM than the global one, and on an earlier one).
    let none = u32::MAX;
    for (shared, global, names) in [
        (576, none, "CTA (9, 0, 0)"),
        (none, 259, "CTA (4, 0, 0)"),
        (576, 259, "CTA ("),
        (130, 600, "CTA ("),
    ] {
        let one = fault_error(shared, global, 1);
        assert!(
            one.contains(names) && (one.contains("st.shared") || one.contains("st.global")),
            "{one}"
        );
        for threads in [2, 4, 8] {
            assert_eq!(
                fault_error(shared, global, threads),
                one,
                "{threads} threads"
            );
        }
    }
}
