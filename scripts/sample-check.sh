#!/usr/bin/env bash
# Sampled simulation against full simulation on every built-in workload:
#
#   scripts/sample-check.sh [--gpu NAME] [--large] [--set KEY=VALUE]... [--out DIR] [NAME...]
#
# Runs `regsim run --sample-check` (the program in full, then sampled) on each workload
# and writes <out>/<name>.json (the sampled run's statistics with `sample_check`), then
# prints one Markdown row per workload: launches (full/sampled/estimated), full cycles,
# estimate, true error, bound, covered, program length over its sample, host seconds of
# both runs and the speed-up. docs/sampling.md holds the measured tables.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
gpu=gtx480
out=
args=()
sets=()
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --gpu) gpu=$2; shift 2 ;;
        --large) args+=(--large); shift ;;
        --set) sets+=(--set "$2"); shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) names+=("$1"); shift ;;
    esac
done
[ -n "$out" ] || out=results/sample-check/$gpu${args:+-large}
mkdir -p "$out"
[ ${#names[@]} -gt 0 ] || names=($(ls workloads/bin))
regsim=target/release/regsim
failed=0
echo "| workload | launches full/sampled/estimated | full cycles | estimate | error | bound (95%) | covered | length / sample | host s full | host s sampled | speed-up |"
echo "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|"
for w in "${names[@]}"; do
    if ! "$regsim" run --gpu "$gpu" "${sets[@]}" --sample-check --stats "$out/$w.json" \
        -- "workloads/bin/$w" "${args[@]}" >"$out/$w.out" 2>"$out/$w.err" \
        || [ "$(grep -c '^PASS' "$out/$w.out")" != 2 ]; then
        echo "| $w | FAILED (see $out/$w.err) |"
        failed=1
        continue
    fi
    jq -r --arg w "$w" '.sample_check as $c | .total.sampling as $s |
        "| \($w) | \($s.full_launches)/\($s.sampled_launches)/\($s.estimated_launches) | \($c.full_cycles) | \($c.estimated_cycles) | \($c.error*10000|round/100)% | \($c.relative_bound*10000|round/100)% | \(if $c.covered then "yes" else "**no**" end) | \($c.length_over_sample*10|round/10) | \($c.full_seconds*100|round/100) | \($c.sampled_seconds*100|round/100) | \($c.speedup*10|round/10)x |"' \
        "$out/$w.json"
done
exit $failed
