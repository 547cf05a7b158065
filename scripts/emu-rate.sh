#!/usr/bin/env bash
# Functional emulation rate over the built-in workloads: warp instructions per wall-clock
# second of each whole program run under `regsim run` (release build, one thread — the
# emulator is single-threaded). The time includes the program's host code (input
# generation, the CPU reference check) and loading its PTX, so the rate is a lower bound
# on the emulator's own speed.
#
#   scripts/emu-rate.sh [--large] [NAME...]
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
if [ "${1:-}" = "--large" ]; then
    args=(--large)
    shift
fi
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for bin in workloads/bin/*; do names+=("$(basename "$bin")"); done
fi

cargo build --release --quiet -p regsim -p cudart
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

total_warp=0
total_ns=0
printf '%-16s %14s %10s %14s\n' workload warp-instrs seconds warp-instrs/s
for name in "${names[@]}"; do
    start=$(date +%s%N)
    if ! target/release/regsim run --functional --stats "$tmp/$name.json" -- "workloads/bin/$name" "${args[@]}" \
        >"$tmp/$name.out" 2>"$tmp/$name.err"; then
        echo "$name failed:" >&2
        tail -n 5 "$tmp/$name.out" "$tmp/$name.err" >&2
        exit 1
    fi
    end=$(date +%s%N)
    ns=$((end - start))
    warp=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"]["warp_instructions"])' "$tmp/$name.json")
    total_warp=$((total_warp + warp))
    total_ns=$((total_ns + ns))
    awk -v n="$name" -v w="$warp" -v ns="$ns" \
        'BEGIN { printf "%-16s %14d %10.3f %14.0f\n", n, w, ns / 1e9, w / (ns / 1e9) }'
done
awk -v w="$total_warp" -v ns="$total_ns" \
    'BEGIN { printf "%-16s %14d %10.3f %14.0f\n", "total", w, ns / 1e9, w / (ns / 1e9) }'
