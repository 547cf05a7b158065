#!/usr/bin/env bash
# Compiles every workload as plain C++ with cuda_on_cpu.h and runs it, to check the
# workloads' host code and kernel logic on a machine without a GPU. Needs g++ and perl,
# not the CUDA toolkit.
#
# Usage: workloads/cpu-check/run.sh [--large] [NAME...]
# Environment: CPU_CHECK_FLAGS (default: -O1 -g with AddressSanitizer and UBSan),
#              VERBOSE=1 to show the programs' output before their verdict lines,
#              MUTATE, a perl substitution applied to each copied source first (for
#              checking that a workload's self-check notices a planted bug).
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workloads=$(dirname "$here")
modes=("")
only=()
for arg in "$@"; do
    case "$arg" in
        --large) modes+=("--large") ;;
        -*) echo "usage: $0 [--large] [NAME...]" >&2; exit 2 ;;
        *) only+=("$arg") ;;
    esac
done
flags=${CPU_CHECK_FLAGS:-"-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined"}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

passed=0
failed=0
for src in "$workloads"/*/*.cu; do
    name=$(basename "$src" .cu)
    [ "$(basename "$(dirname "$src")")" = "$name" ] || continue
    if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
    perl -0pe '
        s/([A-Za-z_]\w*(?:<[^<>]*>)?)\s*<<<(.*?)>>>\s*\(\s*/cpu_launch(cpu_config($2), $1, /gs;
        s/extern\s+__shared__\s+(\w+)\s+(\w+)\s*\[\s*\]\s*;/$1* $2 = ($1*)cpu_dynamic_smem();/g;
    ' "$src" >"$build/$name.cpp"
    if [ -n "${MUTATE:-}" ]; then perl -0pi -e "$MUTATE" "$build/$name.cpp"; fi
    # -I of the workload's directory resolves its "../common/workload.h" include.
    # shellcheck disable=SC2086 # flags is a list
    if ! g++ -std=c++17 $flags -I"$here" -I"$(dirname "$src")" -include "$here/cuda_on_cpu.h" \
        -o "$build/$name" "$build/$name.cpp" 2>"$build/$name.err"; then
        echo "$name: does not compile for the CPU"
        head -20 "$build/$name.err"
        failed=$((failed + 1))
        continue
    fi
    for mode in "${modes[@]}"; do
        out=$("$build/$name" $mode 2>&1)
        rc=$?
        if [ -n "${VERBOSE:-}" ]; then echo "$out" | sed '$d'; fi
        echo "$name${mode:+ $mode}: exit $rc, $(echo "$out" | tail -1)"
        if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
