#!/usr/bin/env python3
"""Prints the table of registers per thread: regsim's allocator next to ptxas -v.

Runs `regsim compile --emit regalloc --json` on every committed nvcc and clang workload PTX
file and joins the result with workloads/ptxas-registers.tsv (written by
scripts/build-workloads.sh from `ptxas -v` on the nvcc PTX).
Usage: scripts/register-table.py [path/to/regsim]
"""
import csv
import json
import pathlib
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
regsim = sys.argv[1] if len(sys.argv) > 1 else str(root / "target/release/regsim")


def ours(compiler, workload):
    path = root / "workloads/ptx" / compiler / f"{workload}.ptx"
    out = subprocess.run([regsim, "compile", str(path), "--emit", "regalloc", "--json"],
                         check=True, capture_output=True, text=True, cwd=root).stdout
    return {k["name"]: k for k in json.loads(out)["kernels"]}


rows = []
with open(root / "workloads/ptxas-registers.tsv") as f:
    for row in csv.DictReader(f, delimiter="\t"):
        rows.append((row["workload"], row["kernel"], int(row["registers"])))

print("| workload | kernel | ptxas -v | regsim (nvcc PTX) | regsim (clang PTX) |")
print("|---|---|---:|---:|---:|")
total_ptxas = total_nvcc = 0
cache = {}
for workload, kernel, ptxas in rows:
    for compiler in ("nvcc", "clang"):
        if (compiler, workload) not in cache:
            cache[(compiler, workload)] = ours(compiler, workload)
    nvcc = cache[("nvcc", workload)][kernel]["registers"]
    clang_kernel = cache[("clang", workload)].get(kernel)
    clang = clang_kernel["registers"] if clang_kernel else "—"
    total_ptxas += ptxas
    total_nvcc += nvcc
    print(f"| {workload} | `{kernel}` | {ptxas} | {nvcc} | {clang} |")
print(f"| **total** | | **{total_ptxas}** | **{total_nvcc}** | |")
