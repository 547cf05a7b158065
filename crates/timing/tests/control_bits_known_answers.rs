//! Known answers of the modern core's compiler control bits (`sm.dependence =
//! "control_bits"`, MICRO'25 issue stage): the stall count holds a dependent instruction
//! for its producer's latency, a dependence counter holds a load's consumer until the
//! load writes, and a consumer waits for a later load that shares its counter.

mod common;

use common::*;
use emu::{Emulator, KernelRef, LaunchConfig};
use timing::config::OpClass;
use timing::{GpuConfig, KernelInfo, KernelStats};

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";
const CONTROL_BITS: &str = "sm.dependence=\"control_bits\"";

/// `ptx`'s kernel `name` with its allocation and the control bits under `cfg`.
fn load_with_control_bits(
    ptx: &str,
    name: &str,
    cfg: &GpuConfig,
) -> (Emulator, KernelRef, KernelInfo) {
    let (emu, k, _) = load(ptx, name);
    let program = &emu.module(k.module).expect("module").program;
    let allocs = compiler::regalloc::allocate_program(program, &Default::default()).unwrap();
    let mut info = KernelInfo::from_allocations(program, k.func, |f| {
        allocs.get(f.index()).and_then(|a| a.allocation.as_ref())
    })
    .unwrap();
    timing::control_bits::attach(&mut info, program, &cfg.pipeline, |f| {
        allocs.get(f.index()).and_then(|a| a.allocation.as_ref())
    });
    (emu, k, info)
}

/// [`add_chain`] of `n` adds, one warp on rtx-a6000.
fn run_add_chain(n: usize, overrides: &[&str]) -> KernelStats {
    let ptx = add_chain(n);
    let mut o = vec!["gpu.num_sms=1"];
    o.extend_from_slice(overrides);
    let cfg = config("rtx-a6000", &o);
    let (mut emu, k, info) = load_with_control_bits(&ptx, "chain", &cfg);
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out]);
    let s = run_warm(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 32), &p);
    assert_eq!(read_u32(&emu, out, 1), [n as u32]);
    s
}

#[test]
fn the_stall_count_holds_a_dependent_instruction_for_its_producers_latency() {
    let per_add =
        |o: &[&str]| (run_add_chain(80, o).cycles - run_add_chain(16, o).cycles) as f64 / 64.0;
    let latency = config("rtx-a6000", &[])
        .pipeline
        .timing(OpClass::Int)
        .latency
        .get() as f64;
    // Each add's stall count is the INT latency: the next add issues exactly then, as the
    // scoreboard's early release under "stall_counter" lets it.
    assert_eq!(per_add(&[CONTROL_BITS]), latency);
    assert_eq!(per_add(&["sm.dependence=\"stall_counter\""]), latency);
}

/// One thread: loads `a = [g]` (cold), then `b = [g+4]` (the same line) and five more
/// loads of that line, then `c` from another line (cold again); `between` of those five
/// are left out. Then it reads the clock, consumes `consumer` (`%f2` is `b`, `%f8` is
/// `c`), reads the clock again and stores the difference. With `between = 5`, `c` takes the dependence counter `b` took (six
/// counters, round robin), so `b`'s consumer waits for `c` as well.
fn shared_counter(between: usize, consumer: &str, overrides: &[&str]) -> u64 {
    let mut ptx = format!(
        "{HEADER}.visible .entry shared(.param .u64 g, .param .u64 out)\n{{\n\
         .reg .f32 %f<16>;\n.reg .b64 %rd<12>;\n\
         ld.param.u64 %rd1, [g];\nld.param.u64 %rd2, [out];\n\
         ld.global.f32 %f1, [%rd1];\nadd.f32 %f9, %f1, %f1;\n\
         ld.global.f32 %f2, [%rd1+4];\n"
    );
    for i in 0..between {
        ptx.push_str(&format!(
            "ld.global.f32 %f{}, [%rd1+{}];\n",
            3 + i,
            8 + 4 * i
        ));
    }
    ptx.push_str(&format!(
        "ld.global.f32 %f8, [%rd1+65536];\n\
         mov.u64 %rd8, %clock64;\nadd.f32 %f10, {consumer}, {consumer};\nmov.u64 %rd9, %clock64;\n\
         sub.s64 %rd10, %rd9, %rd8;\nst.global.u64 [%rd2], %rd10;\n\
         add.f32 %f11, %f10, %f9;\nadd.f32 %f11, %f11, %f8;\n"
    ));
    for i in 0..between {
        ptx.push_str(&format!("add.f32 %f11, %f11, %f{};\n", 3 + i));
    }
    ptx.push_str("st.global.f32 [%rd2+8], %f11;\nret;\n}\n");
    let mut o = vec!["gpu.num_sms=1"];
    o.extend_from_slice(overrides);
    let cfg = config("rtx-a6000", &o);
    let (mut emu, k, info) = load_with_control_bits(&ptx, "shared", &cfg);
    let g = alloc_f32(&mut emu, &vec![1.0; 65536 / 4 + 64]);
    let out = alloc_u32(&mut emu, &[0, 0, 0]);
    let p = params(&emu, k, &[g, out]);
    run(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 1), &p);
    let words = read_u32(&emu, out, 3);
    // 1 + 1 + 1 + 1 + between + 1 (f8) ones, each once in the sum.
    assert_eq!(f32::from_bits(words[2]), (5 + between) as f32);
    u64::from(words[0]) | u64::from(words[1]) << 32
}

#[test]
fn a_load_releases_its_counter_and_a_shared_counter_makes_its_consumer_over_wait() {
    let scoreboard = ["sm.dependence=\"stall_counter\""];
    let (own, own_sb) = (
        shared_counter(4, "%f2", &[CONTROL_BITS]),
        shared_counter(4, "%f2", &scoreboard),
    );
    let (shared, shared_sb) = (
        shared_counter(5, "%f2", &[CONTROL_BITS]),
        shared_counter(5, "%f2", &scoreboard),
    );
    // With a counter of its own, b's consumer waits as long as the scoreboard makes it:
    // the counter is released when b is written.
    assert_eq!(own, own_sb, "own counter");
    // c's consumer waits for c's miss, exactly as long under both: the load releases
    // its counter when it writes.
    let (c, c_sb) = (
        shared_counter(4, "%f8", &[CONTROL_BITS]),
        shared_counter(4, "%f8", &scoreboard),
    );
    assert!(
        c > 100 && c == c_sb,
        "{c} cycles with its counter, {c_sb} under the scoreboard"
    );
    // Sharing b's counter with the cold load c, it waits for c too: at least a miss to
    // the L2 more, where the scoreboard waits for b alone.
    assert!(
        shared > own + 100 && shared > shared_sb + 100,
        "{shared} cycles with a shared counter, {shared_sb} under the scoreboard, {own} without"
    );
}
