#!/usr/bin/env bash
# Rebuilds the calibration microbenchmarks of `regsim calibrate` from
# calibrate/microbench.cu:
#   calibrate/bin/microbench     nvcc -O2 -gencode arch=compute_80,code=compute_80 -cudart
#                                shared (loads libcudart.so.11.0, so regsim's runtime runs
#                                it; PTX only, so that regsim runs the PTX on every config; the
#                                mma test's m16n8k16 and the LDGSTS test's cp.async need sm_80. On silicon, build it with
#                                -arch=sm_80 or later)
#   calibrate/ptx/microbench.ptx nvcc -O2 -arch=sm_80 -ptx (what the simulator executes; the
#                                code is the same as for sm_70, only .target differs)
# Needs nvcc (scripts/install-cuda-toolkit.sh). The PTX is reproducible; the binary need
# not be byte for byte.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo/calibrate"
command -v nvcc >/dev/null 2>&1 || { echo "error: nvcc not found; scripts/install-cuda-toolkit.sh installs it" >&2; exit 1; }
mkdir -p bin ptx
nvcc -O2 -gencode arch=compute_80,code=compute_80 -cudart shared -o bin/microbench microbench.cu
nvcc -O2 -arch=sm_80 -ptx -o ptx/microbench.ptx microbench.cu
echo "built calibrate/bin/microbench and calibrate/ptx/microbench.ptx"
