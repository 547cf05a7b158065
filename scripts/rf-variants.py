#!/usr/bin/env python3
"""Runs the 25 workloads of experiments/malekeh.toml under named register-file variants
and prints, per variant, the mean and geometric mean IPC normalized to a reference
variant, the hit ratio (Malekeh: CCU hits / operand reads; BOW: forwarded / operand reads;
the mean of the workloads' ratios, as the paper's Figure 7 averages, and pooled), the share of scheduler cycles whose issue was refused by operand
collection (stalls bank_conflict + no_free_collector + register_file, over all
scheduler cycles), and the simulation rate against the reference.

    rf-variants.py REGSIM OUTDIR REF 'LABEL=ARGS' ['LABEL=ARGS'...]

ARGS are `regsim run` arguments (e.g. `--gpu rtx2060-scaled --rf malekeh --set
register_file.malekeh.adaptive=true`), optionally after `bin:PATH` (another build of
regsim, e.g. the one before a change). Every program must print PASS; statistics go to
OUTDIR/LABEL/<workload>.json. WORKLOADS=a,b,... runs a subset; JOBS=N runs N at once
(2 by default); PER_WORKLOAD=1 adds a table of normalized IPC per workload.
"""

import json
import math
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

WORKLOADS = [
    "atax", "atomics_cas", "bfs", "blackscholes", "conv2d", "devfunc_call",
    "divergent_loops", "histogram", "kmeans", "knn", "local_array", "matvec_rows",
    "montecarlo", "nbody", "pagerank_pull", "reduction", "saxpy", "scan", "sgemm_regblock",
    "sgemm_tiled", "spmv_csr", "stencil2d", "syrk", "transpose", "warp_intrinsics",
]


def run(regsim, out, label, args, name):
    path = os.path.join(out, label, name + ".json")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        words = shlex.split(args)
        if words and words[0].startswith("bin:"):
            regsim, words = words[0][4:], words[1:]
        cmd = [regsim, "run", *words, "--stats", path, "--", f"workloads/bin/{name}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0 or "PASS" not in p.stdout:
            sys.exit(f"{label} {name}: no PASS (rc {p.returncode})\n{p.stdout[-500:]}\n{p.stderr[-2000:]}")
    with open(path) as f:
        return json.load(f)


def hit(t):
    x = t["register_file"]["extra"]
    for d, h in (("malekeh", "malekeh_hits"), ("bow", "bow_forwarded")):
        if h in x:
            return x[h], x[f"{d}_operand_reads"]
    return 0, 0


def main():
    regsim, out, ref, *variants = sys.argv[1:]
    variants = dict(v.split("=", 1) for v in variants)
    global WORKLOADS
    if os.environ.get("WORKLOADS"):
        WORKLOADS = os.environ["WORKLOADS"].split(",")
    jobs = int(os.environ.get("JOBS", "2"))
    runs = {}
    with ThreadPoolExecutor(jobs) as ex:
        futs = {(l, n): ex.submit(run, regsim, out, l, a, n)
                for l, a in variants.items() for n in WORKLOADS}
        for k, f in futs.items():
            runs[k] = f.result()
    print("| variant | mean IPC | geomean IPC | hit ratio (mean) | hit ratio (pooled) | operand-stall share | rate |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for l in variants:
        ratios, hits, reads, stall, sched, rate, per = [], 0, 0, 0, 0, [], []
        for n in WORKLOADS:
            t, b = runs[(l, n)]["total"], runs[(ref, n)]["total"]
            ratios.append(t["ipc"] / b["ipc"])
            h, r = hit(t)
            hits, reads = hits + h, reads + r
            if r:
                per.append(h / r)
            s = t["stalls"]
            stall += s["bank_conflict"] + s["no_free_collector"] + s["register_file"]
            sched += sum(s.values())
            rs = runs[(l, n)]["simulation"]["warp_instructions_per_second"]
            rb = runs[(ref, n)]["simulation"]["warp_instructions_per_second"]
            rate.append(rs / rb)
        mean = sum(ratios) / len(ratios)
        gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
        hr = f"{sum(per) / len(per):.3f} | {hits / reads:.3f}" if reads else "- | -"
        gr = math.exp(sum(map(math.log, rate)) / len(rate))
        print(f"| {l} | {mean:.3f} | {gm:.3f} | {hr} | {100 * stall / max(1, sched):.2f}% | {gr:.2f} |")
    if os.environ.get("PER_WORKLOAD"):
        print()
        print("| workload | " + " | ".join(variants) + " |")
        print("|---|" + "---:|" * len(variants))
        for n in WORKLOADS:
            b = runs[(ref, n)]["total"]["ipc"]
            print(f"| {n} | " + " | ".join(f"{runs[(l, n)]['total']['ipc'] / b:.3f}" for l in variants) + " |")


if __name__ == "__main__":
    main()
