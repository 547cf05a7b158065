#!/usr/bin/env bash
# Gebhart, Keckler and Dally, MICRO'11 ("A Compile-Time Managed Multi-Level Register File
# Hierarchy"): Figures 11, 13 and 15 and the cycle cost of each design, over the built-in
# workloads, on gtx480 with the two-level scheduler (8 active warps per scheduler).
#
#   scripts/figures-gebhart.sh [--out DIR] [--entries "1 2 3 4 6 8"] [--report-only] [NAME...]
#
# Runs every workload (NAME... restricts the set) through scripts/run-workloads.sh once per
# configuration: the baseline (single-level MRF) with the same scheduler; `--rf rfc` at
# each entries-per-thread value, without and with the hardware LRF; `--rf orf-lrf` at
# each ORF size with no LRF, a unified LRF and a split LRF. Then prints:
# - Figure 11: reads and writes per level, normalized to the single-level register file's
#   (HW RFC and SW ORF), with the RFC hit rate;
# - Figure 13: register-file energy normalized to the single-level register file (HW RFC,
#   SW ORF, HW LRF, SW LRF unified, SW LRF split), the paper's numbers beside;
# - Figure 15: per-workload energy of the best SW configuration (3-entry ORF, split LRF);
# - cycles of every design against the baseline with the same scheduler, and the
#   simulation rate against the baseline's.
# The same points are the `regsim sweep` spec experiments/gebhart.toml (one group per
# design: the baseline, rfc, orf-lrf), which `regsim paper gebhart` runs.
# Energy per access (pJ per 32-bit register of a 4-lane cluster, bank + wire) follows the
# paper's Tables 3 and 4 and §5.2's wire model, as compiler::orf_lrf::energy does: MRF read
# 8 + 7.6, MRF write 11 + 7.6 (1 mm of 4 x 32-bit wires at 1.9 pJ/mm), ORF (and RFC: same
# array sizes) Table 3 + 1.52 (0.2 mm), LRF read 0.7 / write 2.0 + 0.38 (0.05 mm). The MRF
# read energy is not in our copy of Table 4 (8 pJ is the published table's, see
# compiler::orf_lrf::energy). RFC tag lookups have no energy in the paper's tables and are
# left out. Statistics stay under DIR (default results/gebhart, gitignored): rerun with
# --report-only to print the tables again.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

out=results/gebhart
entries="1 2 3 4 5 6 7 8"
report_only=0
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --entries) entries=$2; shift 2 ;;
        --report-only) report_only=1; shift ;;
        -h|--help) sed -n '6,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
        -*) echo "error: unknown option $1" >&2; exit 2 ;;
        *) names+=("$1"); shift ;;
    esac
done

two_level=(--set 'sm.scheduler="two_level"' --set sm.active_warps=8)

run() { # run LABEL RUN-WORKLOADS-FLAGS...
    local label=$1
    shift
    if [ "$report_only" = 1 ]; then return; fi
    echo "== $label" >&2
    scripts/run-workloads.sh --out "$out/$label" "$@" "${two_level[@]}" \
        ${names[@]+"${names[@]}"} >"$out/$label.log" 2>&1 ||
        { echo "error: $label failed; see $out/$label.log" >&2; exit 1; }
}

mkdir -p "$out"
run baseline --rf baseline
for n in $entries; do
    run "rfc-$n" --rf rfc --set "register_file.rfc.entries_per_thread=$n"
    run "rfc-lrf-$n" --rf rfc --set "register_file.rfc.entries_per_thread=$n" \
        --set register_file.rfc.lrf=true
    for lrf in none unified split; do
        run "orf-$lrf-$n" --rf orf-lrf --set "register_file.orf_lrf.orf_entries=$n" \
            --set "register_file.orf_lrf.lrf=\"$lrf\""
    done
done

python3 - "$out" "$entries" <<'EOF'
import json, os, sys

out, entries = sys.argv[1], [int(x) for x in sys.argv[2].split()]

# pJ per 32-bit register access of a 4-lane cluster: bank + 4 x 1.9 pJ/mm x distance.
WIRE = 4 * 1.9
MRF_R, MRF_W = 8.0 + WIRE * 1.0, 11.0 + WIRE * 1.0
ORF_R = [0.7, 1.2, 1.2, 1.9, 2.0, 2.0, 2.4, 3.4]
ORF_W = [2.0, 3.8, 4.4, 6.1, 6.0, 6.7, 7.7, 10.9]
LRF_R, LRF_W = 0.7 + WIRE * 0.05, 2.0 + WIRE * 0.05

def load(label):
    d = os.path.join(out, label)
    if not os.path.isdir(d):
        return None
    runs = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".json"):
            s = json.load(open(os.path.join(d, f)))
            t = s["total"]
            runs[f[:-5]] = {
                "cycles": t["cycles"],
                "insts": t["warp_instructions"],
                "wall": s["simulation"]["wall_seconds"],
                "rf": t["register_file"],
            }
    return runs

def counts(rf):
    """Per-level accesses of one run: (operand reads, operand writes, mrf r/w, upper r/w,
    lrf r/w, extra)."""
    x = rf["extra"]
    if rf["design"] == "rfc":
        up_r, up_w = x["rfc_reads"], x["rfc_writes"]
        lrf_r, lrf_w = x.get("rfc_lrf_reads", 0), x.get("rfc_lrf_writes", 0)
        op_r, op_w = x["rfc_operand_reads"], x["rfc_operand_writes"]
    elif rf["design"] == "orf-lrf":
        up_r, up_w = x["orf_lrf_orf_reads"], x["orf_lrf_orf_writes"]
        lrf_r, lrf_w = x["orf_lrf_lrf_reads"], x["orf_lrf_lrf_writes"]
        op_r, op_w = x["orf_lrf_operand_reads"], x["orf_lrf_operand_writes"]
    else:
        up_r = up_w = lrf_r = lrf_w = 0
        op_r, op_w = rf["reads"], rf["writes"]
    return dict(op_r=op_r, op_w=op_w, mrf_r=rf["reads"], mrf_w=rf["writes"],
                up_r=up_r, up_w=up_w, lrf_r=lrf_r, lrf_w=lrf_w, x=x)

def energy(c, n):
    k = max(1, min(8, n)) - 1
    e = (c["mrf_r"] * MRF_R + c["mrf_w"] * MRF_W
         + c["up_r"] * (ORF_R[k] + WIRE * 0.2) + c["up_w"] * (ORF_W[k] + WIRE * 0.2)
         + c["lrf_r"] * LRF_R + c["lrf_w"] * LRF_W)
    single = c["op_r"] * MRF_R + c["op_w"] * MRF_W
    return e, single

def total(runs):
    agg = None
    for r in runs.values():
        c = counts(r["rf"])
        if agg is None:
            agg = {k: 0 for k in c if k != "x"}
            agg["x"] = {}
        for k in agg:
            if k != "x":
                agg[k] += c[k]
        for k, v in c["x"].items():
            agg["x"][k] = agg["x"].get(k, 0) + v
    return agg

base = load("baseline")
if not base:
    sys.exit(f"no results under {out}/baseline")
base_cycles = sum(r["cycles"] for r in base.values())
base_rate = sum(r["insts"] for r in base.values()) / max(1e-9, sum(r["wall"] for r in base.values()))

print("Figure 11: accesses per level, normalized to the single-level register file's reads (R)")
print("or writes (W). Upper = RFC or ORF; HW RFC reads include writeback reads.")
print(f"{'design':<8} {'entries':>7} {'MRF R':>7} {'upper R':>8} {'MRF W':>7} {'upper W':>8} {'hit rate':>8}")
for n in entries:
    for name, label in (("HW RFC", f"rfc-{n}"), ("SW ORF", f"orf-none-{n}")):
        runs = load(label)
        if not runs:
            continue
        c = total(runs)
        hit = ""
        if name == "HW RFC":
            h, m = c["x"]["rfc_read_hits"], c["x"]["rfc_read_misses"]
            hit = f"{h / max(1, h + m):.1%}"
        print(f"{name:<8} {n:>7} {c['mrf_r'] / c['op_r']:>7.3f} {c['up_r'] / c['op_r']:>8.3f}"
              f" {c['mrf_w'] / c['op_w']:>7.3f} {c['up_w'] / c['op_w']:>8.3f} {hit:>8}")

print()
print("Figure 13: register-file energy normalized to the single-level register file")
paper = {"HW RFC": "0.66", "SW ORF": "0.55 (3)", "HW LRF": "0.59 (6)",
         "SW LRF unified": "~0.50 (3)", "SW LRF split": "0.46 (3)"}
designs = [("HW RFC", "rfc-{}"), ("SW ORF", "orf-none-{}"), ("HW LRF", "rfc-lrf-{}"),
           ("SW LRF unified", "orf-unified-{}"), ("SW LRF split", "orf-split-{}")]
print(f"{'design':<15}" + "".join(f"{n:>7}" for n in entries) + f"{'paper (entries)':>17}")
for name, pattern in designs:
    row = f"{name:<15}"
    for n in entries:
        runs = load(pattern.format(n))
        if not runs:
            row += f"{'-':>7}"
            continue
        e, single = energy(total(runs), n)
        row += f"{e / single:>7.3f}"
    print(row + f"{paper[name]:>17}")

print()
print("Figure 15: per-workload energy of the best SW configuration (3-entry ORF, split LRF),")
print("normalized to the single-level register file")
best = load("orf-split-3")
if best:
    rows = []
    for w, r in best.items():
        e, single = energy(counts(r["rf"]), 3)
        x = r["rf"]["extra"]
        rows.append((e / single, w, x["orf_lrf_stale_reads"], x["orf_lrf_operand_reads"]))
    print(f"{'workload':<16} {'energy':>7} {'stale ORF/LRF reads':>20}")
    for ratio, w, stale, reads in sorted(rows):
        print(f"{w:<16} {ratio:>7.3f} {stale:>12} / {reads}")

print()
print("Cycles against the baseline with the same two-level scheduler, and simulation rate")
print(f"{'config':<18} {'cycles':>10} {'vs base':>8} {'rate':>9} {'vs base':>8}")
print(f"{'baseline':<18} {base_cycles:>10} {1:>8.3f} {base_rate:>9.0f} {1:>8.3f}")
for n in entries:
    for pattern in ("rfc-{}", "rfc-lrf-{}", "orf-none-{}", "orf-unified-{}", "orf-split-{}"):
        label = pattern.format(n)
        runs = load(label)
        if not runs:
            continue
        cyc = sum(r["cycles"] for r in runs.values())
        rate = sum(r["insts"] for r in runs.values()) / max(1e-9, sum(r["wall"] for r in runs.values()))
        print(f"{label:<18} {cyc:>10} {cyc / base_cycles:>8.3f} {rate:>9.0f} {rate / base_rate:>8.3f}")
EOF
