#!/usr/bin/env bash
# The main job: every built-in workload (workloads/bin/*) through `regsim run` in timing
# mode on one GPU config, checked and tabulated.
#
#   scripts/run-workloads.sh [--gpu NAME|PATH] [--rf baseline|ideal] [--set KEY=VALUE]...
#                            [--large] [--functional] [--out DIR] [NAME...]
#
# Builds the release binaries if needed (cargo decides, and shows its progress), runs each
# workload (NAME... restricts the set) with the flags passed through to `regsim run`, and
# writes under results/<config>/ (gitignored; --out DIR overrides) for each workload:
#   <name>.json   the statistics (`regsim run --stats`)
#   <name>.out    the program's stdout; <name>.err  its stderr (one line per kernel)
# <config> is the config's name, then -<design> for --rf, -large, and each --set.
# Every program must print PASS as its last line and exit 0; the script says which did
# not and exits 1 if any failed. At the end it prints the table of `regsim report`:
# workload, status, kernels, warp instructions, cycles, IPC and simulation rate.
# Runs are sequential: the simulator is single-threaded, and the rate column is only
# meaningful for a process that had its core to itself.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

usage() { sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

gpu=gtx480
rf=
large=0
functional=0
out=
sets=()
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --gpu) [ $# -ge 2 ] || usage; gpu=$2; shift 2 ;;
        --rf) [ $# -ge 2 ] || usage; rf=$2; shift 2 ;;
        --set) [ $# -ge 2 ] || usage; sets+=("$2"); shift 2 ;;
        --large) large=1; shift ;;
        --functional) functional=1; shift ;;
        --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
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

run_flags=(--gpu "$gpu")
label=$(basename "$gpu" .toml)
if [ -n "$rf" ]; then
    run_flags+=(--rf "$rf")
    label+="-$rf"
fi
for s in ${sets[@]+"${sets[@]}"}; do
    run_flags+=(--set "$s")
    label+="-$(printf '%s' "$s" | tr -c 'A-Za-z0-9._=-' '_')"
done
if [ "$functional" = 1 ]; then
    run_flags+=(--functional)
    label+="-functional"
fi
program_args=()
if [ "$large" = 1 ]; then
    program_args=(--large)
    label+="-large"
fi
out=${out:-results/$label}

# cargo's own progress (each crate as it compiles): a first build takes minutes.
echo "==> building the release binaries (cargo build --release -p regsim -p cudart)" >&2
cargo build --release -p regsim -p cudart
echo "==> running ${#names[@]} workloads on $label, statistics in $out/" >&2
regsim=target/release/regsim
mkdir -p "$out"

failed=()
for name in "${names[@]}"; do
    printf '%-16s ' "$name" >&2
    start=$(date +%s.%N)
    status=0
    "$regsim" run "${run_flags[@]}" --stats "$out/$name.json" -- \
        "workloads/bin/$name" ${program_args[@]+"${program_args[@]}"} \
        >"$out/$name.out" 2>"$out/$name.err" || status=$?
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    if [ "$status" -eq 0 ] && [ "$(tail -n 1 "$out/$name.out")" = PASS ]; then
        echo "PASS (${seconds}s)" >&2
    else
        echo "FAILED (exit $status, ${seconds}s); last lines of its output:" >&2
        tail -n 3 "$out/$name.out" "$out/$name.err" | sed 's/^/    /' >&2
        failed+=("$name")
        if [ "$status" -eq 2 ] && [ ! -e "$out/$name.json" ]; then
            # regsim itself refused (a bad config): the same for every workload.
            exit 2
        fi
    fi
done

echo >&2
files=()
for name in "${names[@]}"; do
    [ -e "$out/$name.json" ] && files+=("$out/$name.json")
done
if [ ${#files[@]} -gt 0 ]; then
    "$regsim" report "${files[@]}"
fi
echo
echo "statistics in $out/"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]} (${#failed[@]} of ${#names[@]} workloads)" >&2
    exit 1
fi
echo "all ${#names[@]} workloads printed PASS"
