#!/usr/bin/env python3
"""How much of a one-thread `regsim run` full parallel stepping could run in parallel.

    scripts/parallel-amdahl.py [--gpu NAME] [--rf DESIGN] [--frequency HZ] [NAME...]

Profiles each built-in workload (all of workloads/bin, or NAME...) with `perf record`
(self time, no call graphs) and sorts every sample by its function into the work that
docs/parallel.md's design runs per SM in parallel (the SM pipeline, register files,
coalescing, L1 lookups, the emulator's register-only work) and the work it keeps serial
(the shared event queue, interconnect, L2, DRAM, fills, the main loop, CTA placement, the
emulator's global memory, atomics and printf). Anything else (process start, PTX parsing
and compilation, libc, the kernel) counts as serial. Prints a Markdown table with the
parallel fraction p and Amdahl's bound on two threads, 1 / ((1 - p) + p / 2), which no
synchronization scheme can beat. Needs perf, and a release build (built if needed).

The L1's and the L2's lookups are the same generic function (`Cache<T>::access`); the L1's
is the one `MemorySystem::process_lines` calls, found in the library's disassembly.
"""
import argparse, collections, os, re, subprocess, sys, tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(REPO, "target/release/libcudart.so")
ACCESS = "timing::memory::cache::Cache<T>::access"

SERIAL = [
    r"timing::memory::MemorySystem::(handle|run_until_report|advance_to|completed|"
    r"next_event_cycle|l2_|reply|kick_slice|run_channel|send_to_dram|part_done|l1_fill|"
    r"l1_retry|send_to_l2|run_cycle|unblocked|stats|begin_kernel|host_write)",
    r"timing::memory::(event|dram|interconnect|l2|port|hashing)::",
    r"timing::memory::cache::Cache<T>::(fill|install|set_base|L2access)",
    r"timing::gpu::", r"timing::sampling::",
    r"emu::memory::", r"emu::exec::alu::atomic_op", r"emu::exec::alu::Spaces::",
    r"emu::exec::printf", r"emu::exec::Launch::(start_cta|run_ctas|new)",
]
PARALLEL = [
    r"timing::sm::", r"timing::rf::", r"timing::bits::", r"timing::config::",
    r"timing::memory::coalescer::", r"timing::memory::shared_memory::",
    r"timing::memory::MemorySystem::(issue|process_lines|issue_shared|injection_room_at)",
    r"timing::memory::cache::Cache<T>::", r"timing::memory::address_map::",
    r"timing::kernel_info::", r"timing::time::", r"timing::stats::",
    r"emu::exec::", r"emu::semantics::", r"__fmaf?_fma", r"__(sin|cos|exp|log|pow)f?_fma",
]


def l1_access_is_lower():
    """Whether the L1's Cache<T>::access has the lower address of the two instances."""
    nm = subprocess.run(["nm", "-C", LIB], capture_output=True, text=True, check=True).stdout
    addrs, process_lines = [], None
    for line in nm.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[2] == ACCESS:
            addrs.append(int(parts[0], 16))
        elif len(parts) == 3 and parts[2] == "timing::memory::MemorySystem::process_lines":
            process_lines = int(parts[0], 16)
    if len(addrs) != 2 or process_lines is None:
        return True
    dis = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", LIB, f"--start-address={process_lines:#x}",
         f"--stop-address={process_lines + 0x2000:#x}"],
        capture_output=True, text=True).stdout
    calls = {int(m.group(1), 16) for m in re.finditer(r"call\s+([0-9a-f]+)", dis)}
    return min(addrs) in calls or max(addrs) not in calls


def counts(data, l1_lower):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,symoff"],
                         capture_output=True, text=True).stdout
    rows, starts = [], set()
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\+0x([0-9a-f]+)\s*$", line)
        if m:
            sym, start = m.group(2).strip(), int(m.group(1), 16) - int(m.group(3), 16)
            if sym == ACCESS:
                starts.add(start)
            rows.append((sym, start))
        elif line.strip():
            rows.append((line.split(None, 1)[-1].strip(), None))
    l1 = (min if l1_lower else max)(starts) if starts else None
    c = collections.Counter()
    for sym, start in rows:
        if sym == ACCESS and start != l1:
            sym = "timing::memory::cache::Cache<T>::L2access"
        c[sym] += 1
    return c


def classify(c):
    par = ser = 0
    for sym, n in c.items():
        key = sym.lstrip("<")
        if any(re.match(p, key) for p in SERIAL):
            ser += n
        elif any(re.match(p, key) for p in PARALLEL):
            par += n
    return par, ser, sum(c.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="gtx480")
    ap.add_argument("--rf", default="baseline")
    ap.add_argument("--frequency", type=int, default=999)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    os.chdir(REPO)
    names = a.names or sorted(os.listdir("workloads/bin"))
    for n in names:
        if not os.path.isfile(os.path.join("workloads/bin", n)):
            sys.exit(f"parallel-amdahl.py: no workload workloads/bin/{n}")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "regsim"], check=True)
    l1_lower = l1_access_is_lower()
    print(f"| workload ({a.gpu}, {a.rf}) | samples | parallel | serial (memory system, "
          "main loop, global memory) | other (start-up, libc, kernel) | p | 2-thread bound |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            data = os.path.join(tmp, n + ".data")
            run = subprocess.run(
                ["perf", "record", "-q", "-F", str(a.frequency), "-o", data, "--",
                 "target/release/regsim", "run", "--gpu", a.gpu, "--rf", a.rf, "--",
                 os.path.join("workloads/bin", n)],
                capture_output=True, text=True)
            if run.returncode != 0 or not run.stdout.rstrip().endswith("PASS"):
                print(f"| {n} | failed: {run.stderr.strip()[-200:]} |||||")
                continue
            par, ser, total = classify(counts(data, l1_lower))
            p = par / total if total else 0.0
            print(f"| {n} | {total} | {100 * par / total:.0f} % | {100 * ser / total:.0f} % | "
                  f"{100 * (total - par - ser) / total:.0f} % | {p:.2f} | "
                  f"{1 / ((1 - p) + p / 2):.2f}x |")


if __name__ == "__main__":
    main()
