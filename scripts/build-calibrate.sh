#!/usr/bin/env bash
# Rebuilds the calibration microbenchmarks of `regsim calibrate` from
# calibrate/microbench.cu:
#   calibrate/bin/microbench     nvcc -O2 -gencode arch=compute_70,code=compute_70 -cudart
#                                shared (loads libcudart.so.11.0, so regsim's runtime runs
#                                it; PTX only: ptxas refuses the LDGSTS test's cp.async for
#                                sm_70, and regsim runs the PTX. On silicon, build it with
#                                -arch=sm_80 or later)
#   calibrate/ptx/microbench.ptx nvcc -O2 -arch=sm_70 -ptx (what the simulator executes)
# Needs nvcc (scripts/install-cuda-toolkit.sh). The PTX is reproducible; the binary need
# not be byte for byte.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo/calibrate"
command -v nvcc >/dev/null 2>&1 || { echo "error: nvcc not found; scripts/install-cuda-toolkit.sh installs it" >&2; exit 1; }
mkdir -p bin ptx
nvcc -O2 -gencode arch=compute_70,code=compute_70 -cudart shared -o bin/microbench microbench.cu
nvcc -O2 -arch=sm_70 -ptx -o ptx/microbench.ptx microbench.cu
echo "built calibrate/bin/microbench and calibrate/ptx/microbench.ptx"
