#!/usr/bin/env bash
# CERF's figures (issue 12): every built-in workload (or NAME...) on gtx480 as
#   base     the baseline: 128 KB RF + 16 KB L1D (CERF Table I)
#   l1d64    the baseline with a 64 KB L1D (4x: the cache-sensitivity rule's size, and
#            CERF Figure 9's larger separate L1D; 192 KB of storage against CERF's 130)
#   iso      the baseline at CERF's storage (Figure 10's comparison: one 128 KB array
#            split statically between the registers and the L1D): the L1D gets what the
#            registers of the workload's resident warps leave of the register file's
#            128 KB (the largest per kernel, the partition being fixed for the program),
#            rounded down to the largest legal geometry: a power-of-two number of sets of
#            4 to 8 ways (Table I's 4 to Figure 8's 8; the fewest ways on a tie), 128-byte
#            lines; one 4-way set (512 bytes) when nothing is left; computed from base's
#            statistics. A per-workload point, so experiments/cerf.toml cannot list it
#   fair     --rf cerf, register_file.cerf.policy = "lru-fair"
#   prio     --rf cerf, register_file.cerf.policy = "lru-prioritized"
# and prints (1) Figure 7: CPI normalized to base per workload, with l1d64 and iso, and
# the class (cache-sensitive when l1d64's IPC is >= 10% above base's, scripts/cache-sensitivity.sh's rule);
# (2) the averages (geometric mean of the CPI ratios) per class beside the paper's, against
# base and against iso; (3) spills per kilo-instruction and array hit rates; (4) on-chip
# dynamic energy from Table III.
#
#   scripts/figures-cerf.sh [--out DIR] [--markdown] [NAME...]
#
# Statistics go to DIR (default results/figures-cerf/) as <name>.<variant>.json. Exits 1
# if a program did not print PASS.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
usage() { sed -n '20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=results/figures-cerf
markdown=0
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
        --markdown) markdown=1; shift ;;
        -h|--help) usage ;;
        -*) echo "error: unknown option $1" >&2; usage ;;
        *) names+=("$1"); shift ;;
    esac
done
if [ ${#names[@]} -eq 0 ]; then
    for bin in workloads/bin/*; do names+=("$(basename "$bin")"); done
fi
for name in "${names[@]}"; do
    [ -x "workloads/bin/$name" ] || { echo "error: no workload workloads/bin/$name" >&2; exit 2; }
done
cargo build --release --quiet -p regsim -p cudart
regsim=target/release/regsim
mkdir -p "$out"

# The equal-storage L1D of a workload from its baseline statistics (see "iso" above).
iso_l1d_bytes() {
    python3 - "$1" <<'PY'
import json, math, sys
s = json.load(open(sys.argv[1]))
g = s["gpu"]["config"]
regs = 0
for k in s["kernels"]:
    o = k["occupancy"]
    resident = min(o["ctas_per_sm"], -(-math.prod(k["grid"]) // g["gpu"]["num_sms"]))
    regs = max(regs, resident * o["warps_per_cta"] * o["registers_per_warp"] * 4)
budget = g["sm"]["registers"] * 4 - regs
line = g["l1d"]["line_bytes"]
best = (4 * line, 4)
sets = 1
while sets * 4 * line <= budget:
    for ways in range(4, 9):
        size = sets * ways * line
        if size <= budget and (size, -ways) > (best[0], -best[1]):
            best = (size, ways)
    sets *= 2
print(*best)
PY
}
flags_of() {
    case "$1" in
        base) ;;
        l1d64) echo "--set l1d.size_bytes=65536" ;;
        iso)
            read -r size ways <<<"$(iso_l1d_bytes "$out/$2.base.json")"
            echo "--set l1d.size_bytes=$size --set l1d.ways=$ways" ;;
        fair) echo "--rf cerf --set register_file.cerf.policy=\"lru-fair\"" ;;
        prio) echo "--rf cerf --set register_file.cerf.policy=\"lru-prioritized\"" ;;
    esac
}
failed=()
for name in "${names[@]}"; do
    for v in base l1d64 iso fair prio; do
        json="$out/$name.$v.json"
        if [ -s "$json" ] && [ "${CERF_FIGURES_REUSE:-0}" = 1 ]; then continue; fi
        if [ "$v" = iso ] && ! [ -s "$out/$name.base.json" ]; then
            echo "FAILED (no baseline statistics)" >&2
            failed+=("$name/$v")
            continue
        fi
        read -r -a flags <<<"$(flags_of "$v" "$name")"
        printf '%-16s %-6s ' "$name" "$v" >&2
        status=0
        "$regsim" run --gpu gtx480 "${flags[@]}" --stats "$json" -- "workloads/bin/$name" \
            >"$out/$name.$v.out" 2>"$out/$name.$v.err" || status=$?
        if [ "$status" -eq 0 ] && [ "$(tail -n 1 "$out/$name.$v.out")" = PASS ]; then
            echo PASS >&2
        else
            echo "FAILED (exit $status)" >&2
            failed+=("$name/$v")
        fi
    done
done

python3 - "$out" "$markdown" "${names[@]}" <<'PY'
import json, math, sys
out, markdown, names = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
V = ["base", "l1d64", "iso", "fair", "prio"]

def load(name, v):
    try:
        with open(f"{out}/{name}.{v}.json") as f:
            s = json.load(f)
    except (OSError, ValueError):
        return None
    return s["total"] if s.get("program", {}).get("exit_code") == 0 else None

# CERF Table III (pJ per bank access): RF / integrated data read 4.62, write 5.97; 16 KB
# L1D 0.72 / 0.61; L1D tag 0.47 / 0.64; integrated tag 0.75 / 0.78; L2 data 5.52 / 3.95;
# L2 tag 1.05 / 1.91. One count = one warp register or one 128-byte line (8 banks of 16
# bytes, CERF §III.B) for the data arrays; one lookup for tags.
BANKS = 8
def energy(t, cerf):
    rf, l1, l2 = t["register_file"], t["memory"]["l1d"], t["memory"]["l2"]
    x = rf.get("extra", {})
    l2e = (l2["reads"] * (5.52 * BANKS + 1.05) + l2["writes"] * (3.95 * BANKS + 1.91))
    if cerf:
        data = (rf["reads"] + l1["hits"]) * 4.62 * BANKS \
             + (rf["writes"] + l1["writes"] + l1["misses"] + l1["sector_misses"]) * 5.97 * BANKS
        tag = x.get("cerf_register_tag_lookups", 0) * 0.75 + (l1["reads"] + l1["writes"]) * 0.75
        return data + tag, l2e
    data = rf["reads"] * 4.62 * BANKS + rf["writes"] * 5.97 * BANKS \
         + l1["hits"] * 0.72 * BANKS + (l1["writes"] + l1["misses"] + l1["sector_misses"]) * 0.61 * BANKS
    tag = l1["reads"] * 0.47 + l1["writes"] * 0.64
    return data + tag, l2e

rows, cls_of, ratios = [], {}, {}
for n in names:
    t = {v: load(n, v) for v in V}
    if any(t[v] is None for v in V):
        rows.append([n, "failed"] + ["-"] * 11)
        continue
    cyc = {v: t[v]["cycles"] for v in V}
    ins = t["base"]["warp_instructions"]
    r = {v: (cyc[v] / t[v]["warp_instructions"]) / (cyc["base"] / ins) for v in V}
    gain = cyc["base"] / cyc["l1d64"] * t["l1d64"]["warp_instructions"] / ins - 1
    cls = "sensitive" if gain >= 0.10 else "insensitive"
    cls_of[n], ratios[n] = cls, r
    def spk(v):
        x = t[v]["register_file"].get("extra", {})
        return 1000.0 * x.get("cerf_spills", 0) / t[v]["warp_instructions"]
    def hit(v):
        l = t[v]["memory"]["l1d"]; a = l["reads"] + l["writes"]
        return f"{100 * l['hits'] / a:.1f}%" if a else "-"
    e = {v: energy(t[v], v in ("fair", "prio")) for v in ("base", "fair", "prio")}
    eb = sum(e["base"])
    with open(f"{out}/{n}.iso.json") as f:
        iso = json.load(f)["gpu"]["config"]["l1d"]
    rows.append([n, cls, f"{r['l1d64']:.3f}", f"{iso['size_bytes'] / 1024:g} KB {iso['ways']}-way",
                 f"{r['iso']:.3f}",
                 f"{r['fair']:.3f}", f"{r['prio']:.3f}",
                 f"{spk('fair'):.2f}", f"{spk('prio'):.2f}", hit("base"), hit("prio"),
                 f"{sum(e['fair']) / eb:.3f}" if eb else "-",
                 f"{sum(e['prio']) / eb:.3f}" if eb else "-"])
header = ["workload", "class", "CPI l1d64", "iso L1D", "CPI iso", "CPI fair", "CPI prio", "spills/kI fair",
          "spills/kI prio", "L1D hits base", "array hits prio", "energy fair", "energy prio"]

def table(header, rows):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
        for r in [header] + rows:
            print("  ".join(c.ljust(w[i]) if i < 2 else c.rjust(w[i]) for i, c in enumerate(r)))
print("Figure 7: CPI normalized to the baseline (128 KB RF + 16 KB L1D; lower is better),")
print("with the 64 KB L1D and the equal-storage L1D (iso: what the resident warps' registers")
print("leave of 128 KB), spills per kilo warp-instruction, hit rates, on-chip dynamic")
print("energy (RF/array, L1D, tags, L2; Table III) normalized to the baseline")
table(header, rows)
print()

def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
paper = {"sensitive": "+50% (both policies; prioritized slightly ahead)",
         "insensitive": "no loss"}
avg_rows = []
for c in ("sensitive", "insensitive"):
    ns = [n for n in cls_of if cls_of[n] == c]
    if not ns:
        continue
    perf = lambda v, over="base": \
        f"{100 * (gmean([ratios[n][over] for n in ns]) / gmean([ratios[n][v] for n in ns]) - 1):+.1f}%"
    avg_rows.append([c, str(len(ns)), perf("l1d64"), perf("iso"), perf("fair"), perf("prio"),
                     perf("fair", "iso"), perf("prio", "iso"), paper[c]])
rate = {}
for v in V:
    ins = wall = 0.0
    for n in names:
        try:
            with open(f"{out}/{n}.{v}.json") as f:
                s = json.load(f)
            ins += s["total"]["warp_instructions"]; wall += s["simulation"]["wall_seconds"]
        except (OSError, ValueError, KeyError):
            pass
    rate[v] = ins / wall if wall else float("nan")
print("Simulation rate (warp instructions per wall second, all workloads, sequential runs): "
      + ", ".join(f"{v} {rate[v] / 1000:.0f} K" for v in V)
      + f"; CERF / baseline: fair {rate['fair'] / rate['base']:.2f}, prio {rate['prio'] / rate['base']:.2f}")
print()
print("Average performance gain (1 / geometric-mean CPI ratio - 1) over the baseline and, in")
print("the last two columns, of CERF over the equal-storage baseline (iso)")
table(["class", "workloads", "64 KB L1D", "iso L1D", "CERF lru-fair", "CERF lru-prioritized",
       "fair vs iso", "prio vs iso", "paper (CERF vs baseline)"], avg_rows)
PY
echo "statistics in $out/" >&2
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}" >&2
    exit 1
fi
