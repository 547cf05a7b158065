#!/usr/bin/env bash
# Checks that an optimisation of the simulator is pure: runs built-in workloads through
# two regsim binaries on every config and compares their statistics, ignoring the
# wall-clock fields (`simulation` objects).
#
#   scripts/compare-stats.sh BEFORE AFTER [--gpu NAME]... [--rf DESIGN]... [NAME...]
#                            [--threads-before N] [--threads-after N]
#
# BEFORE and AFTER are regsim binaries, each with its libcudart.so beside it (e.g. copies
# of both from another checkout's target/release/, and this checkout's). Without --gpu, every config in configs/; without --rf, each config's
# own design; without NAME, every workload in workloads/bin/. --threads-before/-after
# pass `--threads N` to that side's runs (BEFORE and AFTER may then be the same binary:
# the thread-count identity of issue 27). Prints one line per run
# (same / DIFFERS, and both host times) and exits 1 if any statistics differ or a run
# failed. The JSON files are kept under $TMPDIR/compare-stats.* for inspection.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

usage() { sed -n '5,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
before=$1 after=$2
shift 2
for b in "$before" "$after"; do
    [ -x "$b" ] || { echo "error: $b is not an executable" >&2; exit 2; }
done
gpus=() rfs=() names=()
threads_before=() threads_after=()
while [ $# -gt 0 ]; do
    case "$1" in
        --gpu) [ $# -ge 2 ] || usage; gpus+=("$2"); shift 2 ;;
        --rf) [ $# -ge 2 ] || usage; rfs+=("$2"); shift 2 ;;
        --threads-before) [ $# -ge 2 ] || usage; threads_before=(--threads "$2"); shift 2 ;;
        --threads-after) [ $# -ge 2 ] || usage; threads_after=(--threads "$2"); shift 2 ;;
        -h|--help) usage ;;
        -*) echo "error: unknown option $1" >&2; usage ;;
        *) names+=("$1"); shift ;;
    esac
done
if [ ${#gpus[@]} -eq 0 ]; then
    for c in configs/*.toml; do gpus+=("$(basename "$c" .toml)"); done
fi
[ ${#rfs[@]} -gt 0 ] || rfs=("")
if [ ${#names[@]} -eq 0 ]; then
    for bin in workloads/bin/*; do names+=("$(basename "$bin")"); done
fi
for name in "${names[@]}"; do
    [ -x "workloads/bin/$name" ] || { echo "error: no workload workloads/bin/$name" >&2; exit 2; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/compare-stats.XXXXXX")
strip='del(.. | .simulation?)'
failed=0
for gpu in "${gpus[@]}"; do
    for rf in "${rfs[@]}"; do
        # Both binaries read the same config file (a name resolves to its binary's
        # checkout, and the path is part of the statistics).
        cfg=$gpu
        [ ! -f "configs/$gpu.toml" ] || cfg="$repo/configs/$gpu.toml"
        flags=(--gpu "$cfg")
        [ -z "$rf" ] || flags+=(--rf "$rf")
        for name in "${names[@]}"; do
            tag="$gpu${rf:+-$rf}-$name"
            times=()
            for side in before after; do
                bin=$before threads=(${threads_before[@]+"${threads_before[@]}"})
                [ $side = before ] || { bin=$after; threads=(${threads_after[@]+"${threads_after[@]}"}); }
                start=$(date +%s.%N)
                if ! "$bin" run "${flags[@]}" ${threads[@]+"${threads[@]}"} --stats "$dir/$tag.$side.json" \
                    -- "workloads/bin/$name" >"$dir/$tag.$side.out" 2>"$dir/$tag.$side.err"; then
                    echo "$tag: $side run failed (see $dir/$tag.$side.err)"
                    failed=1
                    continue 2
                fi
                times+=("$(echo "$(date +%s.%N) - $start" | bc)")
            done
            if cmp -s <(jq -S "$strip" "$dir/$tag.before.json") \
                <(jq -S "$strip" "$dir/$tag.after.json") &&
                cmp -s "$dir/$tag.before.out" "$dir/$tag.after.out"; then
                verdict=same
            else
                verdict=DIFFERS
                failed=1
            fi
            printf '%-48s %-8s %6.2f s -> %6.2f s\n' "$tag" "$verdict" "${times[0]}" "${times[1]}"
        done
    done
done
[ $failed -eq 0 ] || { echo "statistics differ or runs failed; files in $dir" >&2; exit 1; }
echo "all statistics identical ($dir)"
