#!/usr/bin/env bash
# Rebuilds the committed test programs in bin/ (needs the CUDA 11.8 toolkit, see
# scripts/install-cuda-toolkit.sh). The tests use the committed binaries so that they run
# without the toolkit.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p bin
NVCC="nvcc -O2 -arch=sm_70 -cudart shared"
$NVCC oob_store.cu -o bin/oob_store
$NVCC unsupported_api.cu -o bin/unsupported_api
# Issue 15, programs that run on GPUs: 32-bit shared addresses, barriers after early
# exits, stray accesses near allocations, launches a GPU refuses.
$NVCC shared_wrap.cu -o bin/shared_wrap
$NVCC barrier_exit.cu -o bin/barrier_exit
$NVCC stray_access.cu -o bin/stray_access
$NVCC launch_refusals.cu -o bin/launch_refusals
# The same kernel with the CUDA runtime linked statically (nvcc's default): regsim run
# must refuse it and say how to rebuild.
nvcc -O2 -arch=sm_70 unsupported_api.cu -o bin/static_cudart
