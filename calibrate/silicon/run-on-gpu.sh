#!/usr/bin/env bash
# Runs regsim's calibration microbenchmarks and every built-in workload natively on a real
# NVIDIA GPU, for `scripts/silicon-compare.py` and calibrate/published.toml. Prepare here
# (needs nvcc, scripts/install-cuda-toolkit.sh), run there (needs only the driver):
#   calibrate/silicon/run-on-gpu.sh build    # here: builds calibrate/silicon/build/
#   calibrate/silicon/run-on-gpu.sh run OUT  # on the GPU machine: writes OUT/*.txt
# The workloads run their committed binaries, whose compute_70 PTX the driver compiles for
# the GPU at hand: the same PTX regsim simulates. Each kernel launch is timed by CUDA
# events in an LD_PRELOAD shim (ktime.cu), which also converts to SM cycles with a clock64
# spin kernel timed the same way. Event times include the launch (about 4.7 us on an H200:
# the shortest launch seen), so short kernels read long. Each program runs twice; the
# comparison uses the second run.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$repo/calibrate/silicon/build
case "${1:-}" in
build)
    mkdir -p "$build"
    arch=${ARCH:-sm_90}
    nvcc -O2 -arch="$arch" -cudart static -o "$build/microbench" "$repo/calibrate/microbench.cu"
    nvcc -O2 -arch="$arch" -Xcompiler -fPIC -shared -cudart shared -o "$build/libktime.so" \
        "$repo/calibrate/silicon/ktime.cu"
    cp -L "$(ldconfig -p | awk '/libcudart.so.11.0 /{print $NF; exit}')" "$build/libcudart.so.11.0"
    echo "built $build (microbench, libktime.so, libcudart.so.11.0) for $arch"
    ;;
run)
    out=${2:?usage: run-on-gpu.sh run OUT}
    mkdir -p "$out"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$out/gpu.txt"
    for i in 1 2 3; do echo "== run $i"; timeout 120 "$build/microbench"; done > "$out/microbench.txt" 2>&1
    export LD_LIBRARY_PATH=$build CUDA_MODULE_LOADING=EAGER
    for size in default large; do
        arg=()
        [ "$size" = large ] && arg=(--large)
        for w in "$repo"/workloads/bin/*; do
            n=$(basename "$w")
            for rep in 1 2; do
                echo "== $n $size rep$rep"
                LD_PRELOAD=$build/libktime.so timeout 30 "$w" "${arg[@]}" 2>&1 |
                    grep -E 'KTIME|KCLOCK|PASS|FAIL|rror' | head -5000 || true
            done
        done > "$out/kt-$size.txt"
    done
    ;;
*) echo "usage: $0 build | run OUT" >&2; exit 2 ;;
esac
