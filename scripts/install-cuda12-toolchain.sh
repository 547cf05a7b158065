#!/usr/bin/env bash
# Assembles a CUDA 12.9 directory that clang-19 accepts as --cuda-path, from NVIDIA's
# CUDA 12 component wheels on the Python package index (fetched with `pip download`, never
# installed into any Python environment):
#
#   include/             CUDA runtime and driver headers, crt/, CUB/Thrust/libcu++ (cccl)
#   nvvm/libdevice/      libdevice.10.bc
#   bin/ptxas            CUDA 12.9's PTX assembler (sm_80, sm_86, sm_89, sm_90, sm_90a)
#   bin/fatbinary        CUDA 11.8's (the wheels carry none; it packs 12.x cubins and PTX)
#   lib64/libcudart.so   NVIDIA's libcudart.so.12, to link against (regsim run replaces it)
#   lib64/stubs/libcuda.so  the driver API stub of the CUDA 11.8 toolkit, if installed
#   cccl/include/        CCCL alone (CUB 2.8, Thrust, libcu++; links into include/), so
#                        that CUDA 11.8's nvcc compiles CUB 2.x without CUDA 12's runtime
#                        headers (scripts/build-workloads.sh, `// cccl` workloads)
#   cutlass/include/     CUTLASS's headers, from the pinned nvidia-cutlass wheel
#                        (scripts/build-workloads.sh, `// cutlass` workloads)
#   version.txt
#
# There is no CUDA 12 nvcc on the index; clang-19 is the compiler. Build a program with
#
#   clang++-19 -O2 -x cuda --cuda-path=DIR -isystem DIR/include \
#       --cuda-gpu-arch=sm_80 --cuda-gpu-arch=sm_90 -Wno-unknown-cuda-version \
#       -LDIR/lib64 -lcudart -o prog prog.cu
#
# (`-isystem DIR/include`: clang searches --cuda-path's headers after /usr/include, where
# the CUDA 11.8 toolkit's headers would otherwise win.)
# and run it with `regsim run -- ./prog` (docs/cuda12.md). Needs python3 with pip,
# clang-19 and CUDA 11.8's fatbinary (scripts/install-cuda-toolkit.sh installs both).
#
# Usage: scripts/install-cuda12-toolchain.sh [DIR]   (default: ~/.local/cuda-12.9)
set -euo pipefail

dest=${1:-$HOME/.local/cuda-12.9}
# Pinned so that every machine gets the same headers and ptxas.
wheels=(
    nvidia-cuda-runtime-cu12==12.9.79
    nvidia-cuda-nvcc-cu12==12.9.86
    nvidia-cuda-cccl-cu12==12.9.27
    nvidia-cutlass==4.2.0.0
)

for tool in python3 clang-19 fatbinary; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: $tool not found; scripts/install-cuda-toolkit.sh installs clang-19 and fatbinary" >&2
        exit 1
    fi
done
if ! python3 -m pip --version >/dev/null 2>&1; then
    # A clean machine (CI) may have python3 without pip: install it from Debian's
    # repositories, as scripts/install-cuda-toolkit.sh installs the toolkit.
    sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
    if command -v apt-get >/dev/null 2>&1; then
        sudo_if_needed apt-get update
        DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y python3-pip
    fi
    if ! python3 -m pip --version >/dev/null 2>&1; then
        echo "error: python3 has no pip (Debian: apt-get install python3-pip)" >&2
        exit 1
    fi
fi
if [ -x "$dest/bin/ptxas" ] && [ -f "$dest/include/cuda_runtime.h" ] && [ -f "$dest/lib64/libcudart.so.12" ] \
    && [ -f "$dest/cccl/include/cub/version.cuh" ] && [ -f "$dest/cutlass/include/cutlass/version.h" ]; then
    echo "CUDA 12 toolchain already in $dest"
    exit 0
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for wheel in "${wheels[@]}"; do
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$scratch/wheels" "$wheel"
done
for file in "$scratch"/wheels/*.whl; do
    python3 -m zipfile -e "$file" "$scratch/tree"
done
tree=$scratch/tree/nvidia

mkdir -p "$dest/bin" "$dest/include" "$dest/lib64" "$dest/nvvm/libdevice"
cp -r "$tree/cuda_runtime/include/." "$tree/cuda_nvcc/include/." "$tree/cuda_cccl/include/." "$dest/include/"
rm -f "$dest/include/__init__.py"
cp "$tree/cuda_nvcc/bin/ptxas" "$dest/bin/ptxas"
chmod +x "$dest/bin/ptxas"
ln -sf "$(command -v fatbinary)" "$dest/bin/fatbinary"
cp "$tree/cuda_nvcc/nvvm/libdevice/libdevice.10.bc" "$dest/nvvm/libdevice/"
cp "$tree/cuda_runtime/lib/libcudart.so.12" "$dest/lib64/"
ln -sf libcudart.so.12 "$dest/lib64/libcudart.so"
stub=/usr/lib/x86_64-linux-gnu/stubs/libcuda.so
if [ -f "$stub" ]; then
    mkdir -p "$dest/lib64/stubs"
    ln -sf "$stub" "$dest/lib64/stubs/libcuda.so"
fi
mkdir -p "$dest/cccl/include"
for dir in cub thrust cuda nv; do
    ln -sfn "../../include/$dir" "$dest/cccl/include/$dir"
done
rm -rf "$dest/cutlass"
mkdir -p "$dest/cutlass"
cp -r "$scratch/tree/cutlass_library/source/include" "$dest/cutlass/include"
echo "CUDA Version 12.9.79" >"$dest/version.txt"

# A smoke test: the directory must build a kernel for sm_80 and sm_90.
cat >"$scratch/smoke.cu" <<'CU'
#include <cuda_runtime.h>
static_assert(CUDART_VERSION >= 12000, "CUDA 11 headers were found before the CUDA 12 ones");
__global__ void smoke(int *p) { p[threadIdx.x] = threadIdx.x; }
int main() { int *p; cudaMalloc(&p, 128); smoke<<<1, 32>>>(p); return cudaDeviceSynchronize(); }
CU
clang++-19 -O2 -x cuda --cuda-path="$dest" -isystem "$dest/include" --cuda-gpu-arch=sm_80 --cuda-gpu-arch=sm_90 \
    -Wno-unknown-cuda-version -L"$dest/lib64" -lcudart -o "$scratch/smoke" "$scratch/smoke.cu"
echo "CUDA 12 toolchain in $dest (clang-19 --cuda-path=$dest; see docs/cuda12.md)"
