#!/usr/bin/env bash
# Rebuilds the committed test programs in bin/ (needs the CUDA 11.8 toolkit). The tests
# use the committed binaries so that they run without the toolkit.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p bin
NVCC="nvcc -O2 -cudart shared -Wno-deprecated-gpu-targets -diag-suppress 1215 -Xcompiler -Wno-deprecated-declarations"
$NVCC -arch=sm_70 runtime_api.cu -o bin/runtime_api
$NVCC -arch=sm_70 kernels.cu -o bin/kernels
$NVCC -arch=sm_70 textures.cu -o bin/textures
$NVCC -arch=sm_70 texture_gather.cu -o bin/texture_gather
$NVCC -arch=sm_70 printf_order.cu -o bin/printf_order
$NVCC -arch=sm_70 unified_memory.cu -o bin/unified_memory
$NVCC -arch=sm_70 device_features.cu -o bin/device_features
$NVCC -arch=sm_70 device_addresses.cu -o bin/device_addresses
$NVCC -arch=sm_70 -Xfatbin -compress-all kernels.cu -o bin/kernels_compressed
# PTX for three virtual architectures, machine code for one: the runtime must pick compute_70.
$NVCC -gencode arch=compute_52,code=compute_52 -gencode arch=compute_70,code=compute_70 \
      -gencode arch=compute_80,code=compute_80 -gencode arch=compute_70,code=sm_70 \
      kernels.cu -o bin/kernels_multi_ptx
# Machine code only: the runtime must say how to rebuild with PTX.
$NVCC -gencode arch=compute_70,code=sm_70 kernels.cu -o bin/kernels_sass_only
