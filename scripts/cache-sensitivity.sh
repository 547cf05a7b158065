#!/usr/bin/env bash
# Classifies every built-in workload as cache-sensitive or not by a measured rule: run it
# in timing mode on one GPU config as is and with an L1D FACTOR times larger (the same
# ways and line size, FACTOR times the sets: `--set l1d.size_bytes=...`), and call it
# cache-sensitive when its IPC (warp instructions per cycle, over all its kernels) grows by
# at least THRESHOLD percent. The sense of CERF (Section IV, Table II): performance grows
# when the L1D grows.
#
#   scripts/cache-sensitivity.sh [--gpu NAME|PATH] [--factor N] [--threshold PCT]
#                                [--markdown] [--out DIR] [NAME...]
#
# Defaults: --gpu gtx480 (16 KB L1D, so 64 KB against 16 KB), --factor 4, --threshold 10.
# Writes the statistics under DIR (default results/cache-sensitivity-<gpu>/):
# <name>.base.json and <name>.l1dx<N>.json, and prints one row per workload: IPC at both
# sizes, the gain, L1D hits per access at both sizes, and the class. Exits 1 if a
# program did not print PASS under either size.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

usage() { sed -n '9,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

gpu=gtx480
factor=4
threshold=10
markdown=0
out=
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --gpu) [ $# -ge 2 ] || usage; gpu=$2; shift 2 ;;
        --factor) [ $# -ge 2 ] || usage; factor=$2; shift 2 ;;
        --threshold) [ $# -ge 2 ] || usage; threshold=$2; shift 2 ;;
        --markdown) markdown=1; shift ;;
        --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "error: unknown option $1" >&2; usage ;;
        *) names+=("$1"); shift ;;
    esac
done
case "$factor" in ''|*[!0-9]*|0) echo "error: --factor wants a positive integer, not '$factor'" >&2; exit 2 ;; esac
case "$threshold" in ''|*[!0-9.]*) echo "error: --threshold wants a percentage, not '$threshold'" >&2; exit 2 ;; esac
if [ ${#names[@]} -eq 0 ]; then
    for bin in workloads/bin/*; do names+=("$(basename "$bin")"); done
fi
for name in "${names[@]}"; do
    [ -x "workloads/bin/$name" ] || { echo "error: no workload workloads/bin/$name" >&2; exit 2; }
done
out=${out:-results/cache-sensitivity-$(basename "$gpu" .toml)}

cargo build --release --quiet -p regsim -p cudart
regsim=target/release/regsim
mkdir -p "$out"

# The config's L1D size, from a functional run's statistics (which record the config).
"$regsim" run --functional --gpu "$gpu" --stats "$out/config.json" -- \
    "workloads/bin/${names[0]}" >/dev/null 2>&1 || true
base_size=$(python3 -c '
import json, sys
print(json.load(open(sys.argv[1]))["gpu"]["config"]["l1d"]["size_bytes"])' "$out/config.json") || {
    echo "error: could not read the L1D size of --gpu $gpu" >&2; exit 2; }
big_size=$((base_size * factor))

failed=()
for name in "${names[@]}"; do
    for variant in base "l1dx$factor"; do
        flags=(--gpu "$gpu")
        [ "$variant" = base ] || flags+=(--set "l1d.size_bytes=$big_size")
        printf '%-16s %-7s ' "$name" "$variant" >&2
        status=0
        "$regsim" run "${flags[@]}" --stats "$out/$name.$variant.json" -- "workloads/bin/$name" \
            >"$out/$name.$variant.out" 2>"$out/$name.$variant.err" || status=$?
        if [ "$status" -eq 0 ] && [ "$(tail -n 1 "$out/$name.$variant.out")" = PASS ]; then
            echo PASS >&2
        else
            echo "FAILED (exit $status)" >&2
            failed+=("$name/$variant")
        fi
    done
done

python3 - "$out" "$factor" "$threshold" "$markdown" "$base_size" "$big_size" "${names[@]}" <<'PY'
import json, sys
out, factor, threshold, markdown = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
base_kb, big_kb = int(sys.argv[5]) // 1024, int(sys.argv[6]) // 1024
names = sys.argv[7:]

def load(name, variant):
    try:
        with open(f"{out}/{name}.{variant}.json") as f:
            s = json.load(f)
    except (OSError, ValueError):
        return None
    if s.get("program", {}).get("exit_code") != 0:
        return None
    t = s["total"]
    l1d = t["memory"]["l1d"]
    accesses = l1d["reads"] + l1d["writes"]
    return {"ipc": t["warp_instructions"] / t["cycles"],
            "hit": l1d["hits"] / accesses if accesses else None}

header = ["workload", f"IPC {base_kb} KB", f"IPC {big_kb} KB", "IPC gain",
          f"L1D hits {base_kb} KB", f"L1D hits {big_kb} KB", "class"]
rows, sensitive = [], 0
for name in names:
    b, g = load(name, "base"), load(name, f"l1dx{factor}")
    if b is None or g is None:
        rows.append([name, "-", "-", "-", "-", "-", "failed"])
        continue
    gain = 100.0 * (g["ipc"] / b["ipc"] - 1.0)
    cls = "sensitive" if gain >= threshold else "insensitive"
    sensitive += cls == "sensitive"
    pct = lambda h: "-" if h is None else f"{100 * h:.1f}%"
    rows.append([name, f"{b['ipc']:.3f}", f"{g['ipc']:.3f}", f"{gain:+.1f}%",
                 pct(b["hit"]), pct(g["hit"]), cls])
numeric = [False, True, True, True, True, True, False]
if markdown:
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---:" if n else "---" for n in numeric) + " |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
else:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(r, widths, numeric)).rstrip())
print()
print(f"rule: cache-sensitive when the IPC with a {big_kb} KB L1D ({factor}x) is at least "
      f"{threshold:g}% above the IPC with {base_kb} KB; {sensitive} of {len(names)} workloads are")
PY
echo "statistics in $out/" >&2
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}" >&2
    exit 1
fi
