#!/usr/bin/env bash
# Malekeh's figures (issue 13) on the built-in workloads: every workload through
# `regsim run` under the baseline, Malekeh and BOW (experiments/malekeh.toml), and under
# Malekeh with fixed stall thresholds (experiments/malekeh-sthld.toml), then the tables.
#
#   scripts/figures-malekeh.sh [--gpu NAME|PATH] [--out DIR] [--tables-only] [NAME...]
#
# Tables (scripts/malekeh-figures.py): Figure 6 (IPC normalized to the baseline),
# Figure 7 (source-operand hit ratio of the CCUs / BOW windows, Malekeh also per near and
# far class), Figure 8 (register-file dynamic energy per warp instruction normalized to
# the baseline, per-access energies cited in the .py), Figure 3 (mean normalized IPC and
# hit ratio per fixed STHLD), the final STHLD of the adaptive controller per SM, and the
# averages beside the paper's. Statistics go to results/malekeh-<config>/ (gitignored;
# --out DIR overrides): <design>/<workload>.json and sthld-<N>/<workload>.json.
# --tables-only prints the tables from existing statistics. Every program must print PASS.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

usage() { sed -n '6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

gpu=rtx2060-scaled
out=
tables_only=0
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --gpu) [ $# -ge 2 ] || usage; gpu=$2; shift 2 ;;
        --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
        --tables-only) tables_only=1; shift ;;
        -h|--help) usage ;;
        -*) echo "error: unknown option $1" >&2; usage ;;
        *) names+=("$1"); shift ;;
    esac
done
if [ ${#names[@]} -eq 0 ]; then
    for bin in workloads/bin/*; do names+=("$(basename "$bin")"); done
fi
out=${out:-results/malekeh-$(basename "$gpu" .toml)}
sthlds=(0 4 16 64 256)

if [ "$tables_only" -eq 0 ]; then
    cargo build --release --quiet
    regsim=target/release/regsim
    failed=()
    run() { # label workload flags...
        local label=$1 name=$2
        shift 2
        mkdir -p "$out/$label"
        if ! "$regsim" run --gpu "$gpu" --stats "$out/$label/$name.json" "$@" \
            -- "workloads/bin/$name" >"$out/$label/$name.out" 2>"$out/$label/$name.err" \
            || [ "$(tail -n 1 "$out/$label/$name.out")" != PASS ]; then
            failed+=("$label/$name")
        fi
    }
    for name in "${names[@]}"; do
        echo "== $name" >&2
        for design in baseline malekeh bow; do
            run "$design" "$name" --rf "$design"
        done
        for s in "${sthlds[@]}"; do
            run "sthld-$s" "$name" --rf malekeh --set register_file.malekeh.adaptive=false \
                --set "register_file.malekeh.sthld=$s"
        done
    done
    if [ ${#failed[@]} -gt 0 ]; then
        echo "error: did not print PASS: ${failed[*]}" >&2
        exit 1
    fi
fi
python3 scripts/malekeh-figures.py "$out" "${sthlds[@]}"
