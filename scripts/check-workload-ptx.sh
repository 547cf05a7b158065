#!/usr/bin/env bash
# Checks that the committed workload PTX (nvcc, clang, nvcc -lineinfo) and the ptxas
# register table are exactly what scripts/build-workloads.sh produces from the committed
# sources. Regenerates them into a temporary directory (binaries are not rebuilt: they
# are not byte-reproducible) and diffs. Exits 1 with the diff on any mismatch, and 1 if
# the CUDA toolkit or clang-19 is missing.
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for tool in nvcc ptxas clang-19; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "check-workload-ptx: $tool not found; run scripts/install-cuda-toolkit.sh first" >&2
        exit 1
    fi
done

fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
"$repo/scripts/build-workloads.sh" --out-dir "$fresh" --no-binaries

status=0
diff -r "$repo/workloads/ptx" "$fresh/ptx" || status=1
diff "$repo/workloads/ptxas-registers.tsv" "$fresh/ptxas-registers.tsv" || status=1
if [ "$status" -ne 0 ]; then
    echo "check-workload-ptx: committed PTX or register table differs from a fresh build;" \
        "rerun scripts/build-workloads.sh and commit the result" >&2
    exit 1
fi
echo "check-workload-ptx: PTX and register table match the sources"
