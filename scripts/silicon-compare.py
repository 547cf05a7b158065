#!/usr/bin/env python3
"""Compares regsim's cycles with a workload run on silicon (calibrate/silicon/run-on-gpu.sh).

  scripts/silicon-compare.py SILICON_KT_FILE STATS_DIR [--gpu h100] [--run]

SILICON_KT_FILE is a kt-*.txt written on the GPU (one block per program and run: the clock
in MHz, then each launch's grid, block and event time). STATS_DIR holds regsim's
`--stats` files named NAME.json; with --run, the missing ones are simulated first
(`target/release/regsim run --gpu GPU --timeout 900 --stats STATS_DIR/NAME.json
workloads/bin/NAME`, with --large when the file is a large-size run; REGSIM names another
binary); a run stopped by its limit is listed as incomplete. Launches are matched in order and must
have the same grid and block. Silicon cycles are printed as measured and less a launch
floor (the shortest event time in the file, taken as the cost of an empty launch), both
at the clock the file measured; the ratio is regsim over silicon less the floor.

A program whose silicon block has no verdict line was cut by run-on-gpu.sh's line cap
(400 lines in the 2026-11-28 run: lu_decomp's 510 launches): its recorded launches are
compared with regsim's first as many, and the row says so. With --launches, each launch
is printed too (the first launch of a kernel in a process pays cold costs, see
docs/correlate.md); with --steady, a second ratio leaves out each kernel's first launch.
"""
import json
import os
import re
import subprocess


def parse(path):
    """{name: (mhz, [(grid, block, us)], complete)} from the second run of each program;
    complete is False when the block has no verdict (PASS/FAIL) line: the log was cut."""
    runs, cur, floor = {}, None, None
    for line in open(path):
        m = re.match(r"== (\S+) (\S+) rep(\d+)", line)
        if m:
            cur = (m.group(1), m.group(3) == "2")
            if cur[1]:
                runs[cur[0]] = [None, [], False]
            continue
        if cur and cur[1] and re.match(r"(PASS|FAIL)", line):
            runs[cur[0]][2] = True
        m = re.match(r"KCLOCK ([0-9.]+) MHz", line)
        if m and cur and cur[1]:
            runs[cur[0]][0] = float(m.group(1))
        m = re.match(r"KTIME \d+ grid (\S+) block (\S+) us ([0-9.]+)", line)
        if m:
            us = float(m.group(3))
            floor = us if floor is None else min(floor, us)
            if cur and cur[1]:
                runs[cur[0]][1].append((m.group(1), m.group(2), us))
    return {k: v for k, v in runs.items() if v[0] and v[1]}, floor


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kt")
    ap.add_argument("stats_dir")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--timeout", type=int, default=900, help="seconds for each simulation")
    ap.add_argument("--launches", action="store_true", help="print each launch too")
    ap.add_argument("--steady", action="store_true",
                    help="add a ratio without each kernel's first launch in the process")
    a = ap.parse_args()
    kt, stats_dir, gpu = a.kt, a.stats_dir, a.gpu
    large = "large" in os.path.basename(kt)
    runs, floor = parse(kt)
    os.makedirs(stats_dir, exist_ok=True)
    print(f"# {kt}: launch floor {floor:.3f} us; regsim --gpu {gpu}{' --large' if large else ''}")
    print(f"{'workload':16} {'launches':>8} {'silicon':>12} {'less floor':>12} {'regsim':>12} {'ratio':>7}"
          + (f" {'steady':>7}" if a.steady else ""))
    for name in sorted(runs):
        mhz, launches, complete = runs[name]
        stats = os.path.join(stats_dir, name + ".json")
        if not os.path.exists(stats) and a.run:
            cmd = [os.environ.get("REGSIM", "target/release/regsim"), "run", "--gpu", gpu,
                   "--timeout", str(a.timeout), "--stats", stats, "workloads/bin/" + name]
            if large:
                cmd.append("--large")
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not os.path.exists(stats):
            continue
        run = json.load(open(stats))
        if not run.get("complete", True):
            print(f"{name:16} regsim's run is incomplete (stopped by a limit)")
            continue
        kernels = run["kernels"]
        note = ""
        if not complete and len(kernels) > len(launches):
            kernels = kernels[:len(launches)]
            note = f"  (silicon's log cut: first {len(launches)} of regsim's {len(run['kernels'])} launches)"
        if len(kernels) != len(launches):
            print(f"{name:16} launches differ: silicon {len(launches)}, regsim {len(kernels)}")
            continue
        for (grid, block, _), k in zip(launches, kernels):
            g = ",".join(str(x) for x in k["grid"])
            b = ",".join(str(x) for x in k["block"])
            if (g, b) != (grid, block):
                print(f"{name:16} launch shapes differ: silicon {grid}/{block}, regsim {g}/{b}")
                break
        else:
            raw = sum(us for _, _, us in launches) * mhz
            less = sum(max(us - floor, 0.0) for _, _, us in launches) * mhz
            sim = sum(k["cycles"] for k in kernels)
            ratio = sim / less if less > 0 else float("nan")
            steady = ""
            if a.steady:
                seen, s_sil, s_sim = set(), 0.0, 0
                for (_, _, us), k in zip(launches, kernels):
                    if k["name"] in seen:
                        s_sil += max(us - floor, 0.0) * mhz
                        s_sim += k["cycles"]
                    seen.add(k["name"])
                steady = f" {s_sim / s_sil:7.2f}" if s_sil > 0 else f" {'-':>7}"
            print(f"{name:16} {len(launches):8} {raw:12.0f} {less:12.0f} {sim:12} {ratio:7.2f}{steady}{note}")
            if a.launches:
                for i, ((grid, block, us), k) in enumerate(zip(launches, kernels)):
                    sil = max(us - floor, 0.0) * mhz
                    r = k["cycles"] / sil if sil > 0 else float("nan")
                    print(f"  {i:4} {grid:>12} {block:>10} {us * mhz:12.0f} {sil:12.0f} {k['cycles']:12} {r:7.2f}  {k['name'][:40]}")


if __name__ == "__main__":
    main()
