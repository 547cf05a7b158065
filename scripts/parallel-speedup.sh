#!/usr/bin/env bash
# The speed-up of `regsim run --threads N` over `--threads 1` (issue 27's acceptance):
# every built-in workload whose one-thread run takes at least --min-seconds of wall time.
#
#   scripts/parallel-speedup.sh [--gpu NAME|PATH]... [--rf DESIGN] [--threads N]
#                               [--min-seconds S] [--repeat K] [--large] [NAME...]
#
# For each config (default gtx480) and workload (all of workloads/bin, or NAME...), runs
# `--threads 1`; if that took at least S seconds (default 2), runs `--threads N` (default
# 2), checks that both printed PASS and that their statistics are identical (wall-clock
# fields aside), and prints one row: one-thread and N-thread wall seconds, the CPU
# seconds (user + system) of each, and the ratio of the wall times; the load average
# before and after frames them.
# With --repeat K each side is the best of K runs; --large runs the workloads' large
# inputs (more of them reach S). Shorter workloads are counted, not timed twice. Exits 1
# if a run failed or two statistics differ.
#
# Only meaningful on a quiet machine with at least N free cores: the ratio is wall time
# against wall time, measured in one invocation so both sides see the same machine.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

usage() { sed -n '5,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

gpus=()
rf=baseline
threads=2
min_seconds=2
repeat=1
program_args=()
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --gpu) [ $# -ge 2 ] || usage; gpus+=("$2"); shift 2 ;;
        --rf) [ $# -ge 2 ] || usage; rf=$2; shift 2 ;;
        --threads) [ $# -ge 2 ] || usage; threads=$2; shift 2 ;;
        --min-seconds) [ $# -ge 2 ] || usage; min_seconds=$2; shift 2 ;;
        --repeat) [ $# -ge 2 ] || usage; repeat=$2; shift 2 ;;
        --large) program_args=(--large); shift ;;
        -h|--help) usage ;;
        -*) echo "parallel-speedup.sh: unknown option $1" >&2; usage ;;
        *) names+=("$1"); shift ;;
    esac
done
[ ${#gpus[@]} -gt 0 ] || gpus=(gtx480)
case "$threads$repeat" in *[!0-9]*) echo "parallel-speedup.sh: --threads and --repeat take whole numbers" >&2; exit 2 ;; esac
if [ ${#names[@]} -eq 0 ]; then
    for b in workloads/bin/*; do names+=("$(basename "$b")"); done
fi
for n in "${names[@]}"; do
    [ -x "workloads/bin/$n" ] || { echo "parallel-speedup.sh: no workload workloads/bin/$n" >&2; exit 2; }
done

cargo build --release -q -p regsim
regsim=target/release/regsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run GPU NAME THREADS TAG: "WALL_MS CPU_S" of the run with the best wall time of
# $repeat (CPU: user + system seconds of that run); the statistics (wall-clock fields
# removed) in $tmp/TAG.json. Fails unless the program printed PASS.
run() {
    local gpu=$1 name=$2 n=$3 tag=$4 best= cpu= t0 t1 s c
    for _ in $(seq "$repeat"); do
        t0=$(date +%s%N)
        if ! { TIMEFORMAT='%U %S'; time "$regsim" run --gpu "$gpu" --rf "$rf" --threads "$n" \
            --stats "$tmp/$tag.raw" -- "workloads/bin/$name" \
            ${program_args[@]+"${program_args[@]}"} >"$tmp/$tag.out" 2>"$tmp/$tag.err"; } \
            2>"$tmp/$tag.time" || [ "$(tail -n 1 "$tmp/$tag.out")" != PASS ]; then
            echo "$name on $gpu with --threads $n failed:" >&2
            tail -n 5 "$tmp/$tag.err" >&2
            return 1
        fi
        t1=$(date +%s%N)
        s=$(( (t1 - t0) / 1000000 ))
        c=$(awk '{ printf "%.2f", $1 + $2 }' "$tmp/$tag.time")
        if [ -z "$best" ] || [ "$s" -lt "$best" ]; then best=$s cpu=$c; fi
    done
    grep -v -e '"wall_seconds"' -e '_per_second"' "$tmp/$tag.raw" >"$tmp/$tag.json"
    echo "$best $cpu"
}

status=0
# The load before and after: the ratio means something only on a quiet machine.
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
printf '%-10s %-16s %9s %8s %9s %8s %8s %s\n' config workload "1 thread" cpu \
    "$threads thr." cpu speed-up identical
for gpu in "${gpus[@]}"; do
    short=0
    for name in "${names[@]}"; do
        if ! one=$(run "$gpu" "$name" 1 one); then status=1; continue; fi
        if [ "${one%% *}" -lt "$(awk -v s="$min_seconds" 'BEGIN { printf "%d", s * 1000 }')" ]; then
            short=$((short + 1))
            continue
        fi
        if ! many=$(run "$gpu" "$name" "$threads" many); then status=1; continue; fi
        same=yes
        cmp -s "$tmp/one.json" "$tmp/many.json" || { same=NO; status=1; }
        cmp -s "$tmp/one.out" "$tmp/many.out" || { same=NO; status=1; }
        awk -v g="$gpu" -v w="$name" -v a="${one%% *}" -v ca="${one##* }" -v b="${many%% *}" \
            -v cb="${many##* }" -v s="$same" 'BEGIN {
            printf "%-10s %-16s %8.2fs %7.2fs %8.2fs %7.2fs %7.2fx %s\n", g, w, a / 1000, ca,
                b / 1000, cb, a / b, s }'
    done
    echo "$gpu: $short workloads under ${min_seconds} s with one thread (not timed twice)"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
