//! Multi-threaded stepping with CTA-private instructions and global loads issued in the
//! parallel phase (`timing::parallel`, `emu::Launch::cta_private_executor`): statistics,
//! memory, device `printf` output and errors are those of one thread, for kernels that
//! mix CTA-private work (shared memory, barriers, arithmetic, local memory) with
//! order-sensitive shared effects (a global atomic whose old values depend on the order
//! of every SM's atomics, stores of those values, `printf` of them; global loads of
//! words other SMs store in the same cycles), under every design.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::*;
use emu::LaunchConfig;
use timing::TimingSimulator;

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// The module-level declarations [`print_gid_and`] needs.
const PRINT_GLOBALS: &str =
    ".extern .func (.param .b32 status) vprintf(.param .b64 fmt, .param .b64 args);\n\
     .global .align 1 .b8 fmt[11] = {103, 32, 37, 117, 32, 118, 32, 37, 117, 10, 0};\n";

/// The kernel-level declarations [`print_gid_and`] needs.
const PRINT_LOCALS: &str =
    ".local .align 8 .b8 depot[8];\n.reg .pred %pp;\n.reg .b32 %pr;\n.reg .b64 %pd<5>;\n";

/// Every `every`-th thread prints `g <gid> v <value>` (the global thread id in `%r4`),
/// then the kernel returns.
fn print_gid_and(every: u32, value: &str) -> String {
    format!(
        "rem.u32 %pr, %r4, {every};\nsetp.ne.u32 %pp, %pr, 0;\n@%pp bra $L_done;\n\
         mov.u64 %pd1, depot;\ncvta.local.u64 %pd2, %pd1;\n\
         st.local.u32 [%pd1], %r4;\nst.local.u32 [%pd1+4], {value};\n\
         mov.u64 %pd3, fmt;\ncvta.global.u64 %pd4, %pd3;\n\
         {{\n.param .b64 f0;\nst.param.b64 [f0], %pd4;\n.param .b64 f1;\n\
         st.param.b64 [f1], %pd2;\n.param .b32 st0;\ncall.uni (st0), vprintf, (f0, f1);\n}}\n\
         $L_done:\nret;\n}}\n"
    )
}

/// `mix(out, counter)`: each thread writes `3 * gid` to shared memory, reads its
/// neighbour's after a barrier, adds `(neighbour & 7) + 1` to `*counter` atomically,
/// stores `old ^ neighbour` to `out[gid]`, and every 37th thread prints `gid` and `old`.
fn mix_ptx() -> String {
    format!(
        "{HEADER}{PRINT_GLOBALS}\
         .visible .entry mix(.param .u64 out, .param .u64 counter)\n{{\n{PRINT_LOCALS}\
         .shared .align 4 .b32 tile[64];\n\
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
         mul.wide.u32 %rd3, %r4, 4;\nadd.u64 %rd4, %rd1, %rd3;\nst.global.u32 [%rd4], %r15;\n{}",
        print_gid_and(37, "%r14")
    )
}

/// `race(buf, other, out)`: every thread loads and stores words of the 64-word `buf`
/// that threads of other CTAs (so other SMs, often in the same cycle) store and load,
/// eight times; then a load whose address is a loaded value, a sign-extended byte and a
/// vector load of `other`. It stores its running sum to `out[gid]`, and every 41st
/// thread prints it. The loads issue in the parallel phase with their reads deferred
/// to their SM's turn: a read in the wrong order changes the values.
fn race_ptx() -> String {
    format!(
        "{HEADER}{PRINT_GLOBALS}\
         .visible .entry race(.param .u64 buf, .param .u64 other, .param .u64 out)\n{{\n\
         {PRINT_LOCALS}.reg .pred %p<3>;\n.reg .b32 %r<30>;\n.reg .b64 %rd<30>;\n\
         ld.param.u64 %rd1, [buf];\nld.param.u64 %rd2, [other];\nld.param.u64 %rd3, [out];\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\n\
         mad.lo.u32 %r4, %r2, %r3, %r1;\n\
         mov.u32 %r5, 0;\nmov.u32 %r6, 0;\n\
         $L_loop:\n\
         mul.lo.u32 %r7, %r5, 13;\nmad.lo.u32 %r7, %r4, 7, %r7;\nand.b32 %r7, %r7, 63;\n\
         mul.wide.u32 %rd4, %r7, 4;\nadd.u64 %rd5, %rd1, %rd4;\nld.global.u32 %r8, [%rd5];\n\
         add.u32 %r6, %r6, %r8;\nxor.b32 %r6, %r6, %r5;\n\
         mad.lo.u32 %r9, %r4, 5, %r5;\nand.b32 %r9, %r9, 63;\n\
         mul.wide.u32 %rd6, %r9, 4;\nadd.u64 %rd7, %rd1, %rd6;\n\
         add.u32 %r10, %r8, %r4;\nst.global.u32 [%rd7], %r10;\n\
         add.u32 %r5, %r5, 1;\nsetp.lt.u32 %p1, %r5, 8;\n@%p1 bra $L_loop;\n\
         and.b32 %r11, %r6, 63;\nmul.wide.u32 %rd8, %r11, 4;\nadd.u64 %rd9, %rd1, %rd8;\n\
         ld.global.u32 %r12, [%rd9];\nadd.u32 %r6, %r6, %r12;\n\
         and.b32 %r13, %r1, 62;\nmul.wide.u32 %rd10, %r13, 4;\nadd.u64 %rd11, %rd2, %rd10;\n\
         ld.global.s8 %r14, [%rd11];\nld.global.v2.u32 {{%r15, %r16}}, [%rd11];\n\
         add.u32 %r6, %r6, %r14;\nmad.lo.u32 %r6, %r15, 3, %r6;\nxor.b32 %r6, %r6, %r16;\n\
         mul.wide.u32 %rd12, %r4, 4;\nadd.u64 %rd13, %rd3, %rd12;\nst.global.u32 [%rd13], %r6;\n{}",
        print_gid_and(41, "%r6")
    )
}

/// The global access of a faulting kernel ([`fault_ptx`]): thread `%r4` accesses
/// `[%rd3]`.
const STORE: &str = "st.global.u32 [%rd3], %r4;\n";
/// A global load (deferred in the parallel phase) whose value goes to `out[0]`.
const LOAD: &str = "ld.global.u32 %r5, [%rd3];\nadd.u32 %r5, %r5, 1;\nst.global.u32 [%rd1], %r5;\n";

/// `fault(out)`: thread `shared_thread` stores far outside shared memory (a CTA-private
/// instruction), thread `global_thread` accesses far outside `out` (global memory) with
/// `access` ([`STORE`] or [`LOAD`]) where the others access their word of `out`.
fn fault_ptx(shared_thread: u32, global_thread: u32, access: &str) -> String {
    format!(
        "{HEADER}.visible .entry fault(.param .u64 out)\n{{\n\
         .shared .align 4 .b32 tile[64];\n.reg .pred %p<3>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\n\
         mov.u32 %r3, %ntid.x;\nmad.lo.u32 %r4, %r2, %r3, %r1;\n\
         mul.wide.u32 %rd2, %r4, 4;\nadd.u64 %rd3, %rd1, %rd2;\n\
         setp.eq.u32 %p1, %r4, {shared_thread};\n@%p1 st.shared.u32 [1048576], %r4;\n\
         setp.eq.u32 %p2, %r4, {global_thread};\n@%p2 add.u64 %rd3, %rd3, 1099511627776;\n\
         {access}ret;\n}}\n"
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

/// Kernel `name` of `ptx` on `threads` threads under `design` (gtx480), `CTAS` CTAs of
/// `BLOCK` threads, its parameters global buffers holding `buffers`: the statistics
/// without wall-clock figures, each buffer afterwards and what the kernel printed.
fn run_kernel(
    (ptx, name): (&str, &str),
    buffers: &[Vec<u32>],
    design: &str,
    threads: usize,
) -> (String, Vec<Vec<u32>>, String) {
    let (mut emu, k, _) = load(ptx, name);
    let printed = Captured::default();
    emu.printf_sink = Box::new(printed.clone());
    let ptrs: Vec<u64> = buffers.iter().map(|b| alloc_u32(&mut emu, b)).collect();
    let p = params(&emu, k, &ptrs);
    let cfg = config("gtx480", &[&format!("register_file.design=\"{design}\"")]);
    let info = compiled_info(&emu, k, &cfg);
    let mut sim = TimingSimulator::new(cfg);
    sim.set_threads(threads).expect("threads start");
    let mut stats = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(CTAS, BLOCK), &p, &info)
        .unwrap_or_else(|e| panic!("{design} on {threads} threads: {e}"));
    stats.simulation = Default::default();
    let text = String::from_utf8(printed.0.lock().unwrap().clone()).expect("UTF-8");
    let after = ptrs
        .iter()
        .zip(buffers)
        .map(|(&a, b)| read_u32(&emu, a, b.len()))
        .collect();
    (format!("{stats:?}"), after, text)
}

/// Checks that `text` has a line for every `every`-th thread ([`print_gid_and`]).
fn assert_printed_every(text: &str, every: u32, design: &str) {
    let lines = text.lines().count();
    assert_eq!(
        lines,
        (CTAS * BLOCK).div_ceil(every) as usize,
        "{design}: {text}"
    );
}

#[test]
fn atomics_printf_and_shared_memory_are_identical_on_every_thread_count() {
    let ptx = mix_ptx();
    let buffers = [vec![0; (CTAS * BLOCK) as usize], vec![0]];
    for design in DESIGNS {
        let one = run_kernel((&ptx, "mix"), &buffers, design, 1);
        // The kernel ran: every thread added at least 1, and every 37th printed.
        assert!(
            one.1[1][0] >= CTAS * BLOCK,
            "{design}: counter {}",
            one.1[1][0]
        );
        assert_printed_every(&one.2, 37, design);
        for threads in [2, 4] {
            let many = run_kernel((&ptx, "mix"), &buffers, design, threads);
            assert!(one == many, "{design}: {threads} threads differ from one");
        }
    }
}

#[test]
fn racing_global_loads_and_stores_of_different_sms_see_the_one_thread_values() {
    let ptx = race_ptx();
    let buffers = [
        (0..64).map(|i| i * 0x0101_0101).collect(),
        (0..64).map(|i| 0x8000_0080 | i).collect(),
        vec![0; (CTAS * BLOCK) as usize],
    ];
    for design in DESIGNS {
        let one = run_kernel((&ptx, "race"), &buffers, design, 1);
        // The kernel ran: `buf` changed, and every 41st thread printed.
        assert_ne!(one.1[0][1], 0x0101_0101, "{design}");
        assert_printed_every(&one.2, 41, design);
        for threads in [2, 4] {
            let many = run_kernel((&ptx, "race"), &buffers, design, threads);
            assert!(
                one.1 == many.1,
                "{design}: {threads} threads: memory differs"
            );
            assert_eq!(one.2, many.2, "{design}: {threads} threads: printf differs");
            assert!(
                one == many,
                "{design}: {threads} threads: statistics differ"
            );
        }
    }
}

/// The error of `fault` with the two faulting threads and `access` on `threads` threads.
fn fault_error(shared_thread: u32, global_thread: u32, access: &str, threads: usize) -> String {
    let (mut emu, k, info) = load(&fault_ptx(shared_thread, global_thread, access), "fault");
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
    // one on a later SM than the global one, and on an earlier one); the global access a
    // store, or a load (deferred in the parallel phase: its error names the load, not the
    // instruction after it).
    let none = u32::MAX;
    for (access, global_text) in [(STORE, "st.global"), (LOAD, "ld.global.u32")] {
        for (shared, global, names) in [
            (576, none, "CTA (9, 0, 0)"),
            (none, 259, "CTA (4, 0, 0)"),
            (576, 259, "CTA ("),
            (130, 600, "CTA ("),
        ] {
            let one = fault_error(shared, global, access, 1);
            let text = if shared == none {
                global_text
            } else if global == none {
                "st.shared"
            } else {
                ""
            };
            assert!(one.contains(names) && one.contains(text), "{one}");
            assert!(
                one.contains("st.shared") || one.contains(global_text),
                "{one}"
            );
            for threads in [2, 4, 8] {
                assert_eq!(
                    fault_error(shared, global, access, threads),
                    one,
                    "{threads} threads"
                );
            }
        }
    }
}
