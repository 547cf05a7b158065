#!/usr/bin/env bash
# Sampled simulation against full simulation on every built-in workload:
#
#   scripts/sample-check.sh [--gpu NAME] [--large] [--set KEY=VALUE]... [--out DIR] [NAME...]
#
# Runs each workload sampled (`regsim run --sample`) and in full, each run under
# `perf stat -e instructions:u` (host instructions retired: host work that a shared,
# loaded machine does not disturb, unlike seconds); where the machine has no hardware
# counters, under `perf stat -e task-clock` (host CPU time, not wall time); without perf,
# not measured. Writes <out>/<name>.{sampled,full}.json and prints one Markdown row per
# workload: launches (full/sampled/estimated), full cycles, estimate, true error, bound,
# covered, program length over its sample, host work of both runs and their ratio.
# A sampled run whose launches all ran in full is the full run's simulation: the full run
# is not repeated (error 0, ratio 1). `regsim run --sample-check` is the same check
# from one command, per launch. docs/sampling.md holds the measured tables.
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
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) names+=("$1"); shift ;;
    esac
done
[ -n "$out" ] || out=results/sample-check/$gpu${args:+-large}
mkdir -p "$out"
[ ${#names[@]} -gt 0 ] || names=($(ls workloads/bin))
regsim=${REGSIM:-target/release/regsim}
event=
unit=
for e in instructions:u task-clock; do
    if perf stat -e "$e" -x, true 2>&1 >/dev/null | grep -q "^[0-9.]*,[^,]*,$e"; then
        event=$e
        break
    fi
done
case "$event" in
    instructions:u) unit="G instructions"; scale=1e9 ;;
    task-clock) unit="CPU s"; scale=1e3 ;;
    *) unit="(not measured)"; scale=1 ;;
esac
# Runs regsim with the given arguments; the host work it did (or 0) goes to $1.
counted() {
    local count=$1; shift
    if [ -n "$event" ]; then
        perf stat -e "$event" -x, -o "$count" -- "$@"
    else
        echo "0,,none" >"$count"
        "$@"
    fi
}
work() { awk -F, '/^[0-9.]+,/ { print $1 + 0 }' "$1"; }
failed=0
echo "| workload | launches full/sampled/estimated | full cycles | estimate | error | bound (95%) | covered | length / sample | host $unit full | sampled | ratio |"
echo "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|"
for w in "${names[@]}"; do
    base=$out/$w
    if ! counted "$base.sampled.perf" "$regsim" run --gpu "$gpu" "${sets[@]}" --sample \
        --stats "$base.sampled.json" -- "workloads/bin/$w" "${args[@]}" \
        >"$base.sampled.out" 2>"$base.sampled.err" \
        || ! grep -q '^PASS' "$base.sampled.out"; then
        echo "| $w | FAILED (see $base.sampled.err) |"
        failed=1
        continue
    fi
    identical=$(jq '.total.sampling | .sampled_launches + .estimated_launches == 0' \
        "$base.sampled.json")
    if [ "$identical" = true ]; then
        cp "$base.sampled.json" "$base.full.json"
        cp "$base.sampled.perf" "$base.full.perf"
    elif ! counted "$base.full.perf" "$regsim" run --gpu "$gpu" "${sets[@]}" \
        --stats "$base.full.json" -- "workloads/bin/$w" "${args[@]}" \
        >"$base.full.out" 2>"$base.full.err" \
        || ! grep -q '^PASS' "$base.full.out"; then
        echo "| $w | FAILED (see $base.full.err) |"
        failed=1
        continue
    fi
    jq -r -n --arg w "$w" \
        --argjson fi "$(work "$base.full.perf")" \
        --argjson si "$(work "$base.sampled.perf")" --argjson scale "$scale" \
        --slurpfile f "$base.full.json" --slurpfile s "$base.sampled.json" '
        $f[0].total.cycles as $fc | $s[0].total.cycles as $ec | $s[0].total.sampling as $t |
        (($ec - $fc) / $fc) as $err | ($t.bound_cycles / $ec) as $b |
        "| \($w) | \($t.full_launches)/\($t.sampled_launches)/\($t.estimated_launches) | \($fc) | \($ec) | \($err*10000|round/100)% | \($b*10000|round/100)% | \(if ($ec - $fc | fabs) <= $t.bound_cycles then "yes" else "**no**" end) | \($fc / ([$t.detailed_cycles, 1] | max) * 10 | round / 10) | \($fi / $scale * 100 | round / 100) | \($si / $scale * 100 | round / 100) | \(if $si > 0 then ($fi / $si * 10 | round / 10 | tostring) + "x" else "-" end) |"'
done
exit $failed
