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
$NVCC barrier_slot_reuse.cu -o bin/barrier_slot_reuse
$NVCC stray_access.cu -o bin/stray_access
$NVCC launch_refusals.cu -o bin/launch_refusals
# Issue 26, kernels that never end: spinning on a flag nothing sets, and (`deadlock`) a
# two-warp deadlock on named barriers.
$NVCC never_ends.cu -o bin/never_ends
# The same kernel with the CUDA runtime linked statically (nvcc's default): regsim run
# must refuse it and say how to rebuild.
nvcc -O2 -arch=sm_70 unsupported_api.cu -o bin/static_cudart
# __cluster_dims__ (sm_90): nvcc 11.8 emits .explicitcluster and .reqnctapercluster for it
# (clang-19 ignores the attribute).
nvcc -O2 -arch=sm_90 -cudart shared cluster_dims.cu -o bin/cluster_dims
# Single-bit tensor-core products (mma.sync .b1 and/xor popc, sm_80), inline PTX.
nvcc -O2 -arch=sm_80 -cudart shared mma_b1.cu -o bin/mma_b1
# wmma of every type (<mma.h>: tf32, double, 8-bit, experimental s4/u4/b1), sm_80.
nvcc -O2 -std=c++17 -arch=sm_80 -cudart shared wmma_types.cu -o bin/wmma_types
# Sparse tensor-core products (mma.sp f16/s8/tf32, sm_80), inline PTX.
nvcc -O2 -arch=sm_80 -cudart shared mma_sparse.cu -o bin/mma_sparse
# Volta's quad-pair mma.sync m8n8k4 with f16 inputs (every .row/.col, f16/f32 accumulators).
$NVCC mma_volta.cu -o bin/mma_volta
# Double-precision tensor-core products (mma.sync m16n8k4/k8/k16 .f64 sm_90, m8n8k4 .f64).
nvcc -O2 -arch=sm_90 -cudart shared mma_f64.cu -o bin/mma_f64
# A driver-API program (host code only; it loads its kernel as PTX text at run time).
g++ -O2 -x c++ driver_api.cu -lcuda -o bin/driver_api
# Issue 26: a driver-API launcher of any PTX file at any size (plain C, dlopen: no CUDA needed).
gcc -O2 -Wall launch_probe.c -ldl -o bin/launch_probe
# CUDA 12 programs, built by clang-19 against the directory scripts/install-cuda12-toolchain.sh
# assembles (CUDA12_PATH, default ~/.local/cuda-12.9): regsim run must give them its
# runtime as libcudart.so.12.
cuda12=${CUDA12_PATH:-$HOME/.local/cuda-12.9}
if [ -f "$cuda12/include/cuda_runtime.h" ]; then
    CLANG12="clang++-19 -O2 -x cuda --cuda-path=$cuda12 -isystem $cuda12/include --cuda-gpu-arch=sm_80 --cuda-gpu-arch=sm_90 -Wno-unknown-cuda-version -L$cuda12/lib64"
    $CLANG12 cuda12_runtime.cu -lcudart -o bin/cuda12_runtime
    # sm_90a (setmaxnreg): CUDA 11.8's fatbinary does not know the profile, so the PTX
    # is packed as compute_90 (regsim reads the PTX text, whose .target says sm_90a).
    SM90A="clang++-19 -O2 -x cuda --cuda-path=$cuda12 -isystem $cuda12/include --cuda-gpu-arch=sm_90a -Wno-unknown-cuda-version"
    tmp=$(mktemp -d)
    $SM90A --cuda-device-only -S warp_specialized.cu -o "$tmp/ws.ptx"
    fatbinary -64 --create "$tmp/ws.fatbin" --image=profile=compute_90,file="$tmp/ws.ptx"
    $SM90A --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$tmp/ws.fatbin" \
        -c warp_specialized.cu -o "$tmp/ws.o"
    clang++-19 "$tmp/ws.o" -L$cuda12/lib64 -lcudart -o bin/warp_specialized
    # cp.async.bulk (sm_90), packed the same way.
    SM90="clang++-19 -O2 -x cuda --cuda-path=$cuda12 -isystem $cuda12/include --cuda-gpu-arch=sm_90 -Wno-unknown-cuda-version"
    $SM90 --cuda-device-only -S bulk_copy.cu -o "$tmp/b.ptx"
    fatbinary -64 --create "$tmp/b.fatbin" --image=profile=compute_90,file="$tmp/b.ptx"
    $SM90 --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$tmp/b.fatbin" \
        -c bulk_copy.cu -o "$tmp/b.o"
    clang++-19 "$tmp/b.o" -L$cuda12/lib64 -lcudart -o bin/bulk_copy
    # Multicast and peer bulk copies across a cluster (sm_90), packed the same way (nvcc
    # 11.8 cannot: its PTX ISA 7.8 has no cp.async.bulk).
    $SM90 --cuda-device-only -S multicast.cu -o "$tmp/m.ptx"
    fatbinary -64 --create "$tmp/m.fatbin" --image=profile=compute_90,file="$tmp/m.ptx"
    $SM90 --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$tmp/m.fatbin" \
        -c multicast.cu -o "$tmp/m.o"
    clang++-19 "$tmp/m.o" -L$cuda12/lib64 -lcudart -o bin/multicast
    # TMA (cp.async.bulk.tensor, sm_90a) with tensor maps from the driver API (through
    # cudaGetDriverEntryPoint: the wheels' libcuda stub is CUDA 11.8's, without it).
    $SM90A --cuda-device-only -S tma.cu -o "$tmp/t.ptx"
    fatbinary -64 --create "$tmp/t.fatbin" --image=profile=compute_90,file="$tmp/t.ptx"
    $SM90A --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$tmp/t.fatbin" \
        -c tma.cu -o "$tmp/t.o"
    clang++-19 "$tmp/t.o" -L$cuda12/lib64 -lcudart -o bin/tma
    # Warpgroup matrix products (wgmma, sm_90a) from shared-memory descriptors.
    $SM90A --cuda-device-only -S wgmma.cu -o "$tmp/w.ptx"
    fatbinary -64 --create "$tmp/w.fatbin" --image=profile=compute_90,file="$tmp/w.ptx"
    $SM90A --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$tmp/w.fatbin" \
        -c wgmma.cu -o "$tmp/w.o"
    clang++-19 "$tmp/w.o" -L$cuda12/lib64 -lcudart -o bin/wgmma
    # Sparse warpgroup products (wgmma.mma_async.sp, sm_90a), packed the same way.
    $SM90A --cuda-device-only -S wgmma_sparse.cu -o "$tmp/ws.ptx"
    fatbinary -64 --create "$tmp/ws.fatbin" --image=profile=compute_90,file="$tmp/ws.ptx"
    $SM90A --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$tmp/ws.fatbin" \
        -c wgmma_sparse.cu -o "$tmp/ws.o"
    clang++-19 "$tmp/ws.o" -L$cuda12/lib64 -lcudart -o bin/wgmma_sparse
    # Thread-block clusters (sm_90): distributed shared memory and the cluster barrier.
    $SM90 --cuda-device-only -S cluster.cu -o "$tmp/c.ptx"
    fatbinary -64 --create "$tmp/c.fatbin" --image=profile=compute_90,file="$tmp/c.ptx"
    $SM90 --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$tmp/c.fatbin" \
        -c cluster.cu -o "$tmp/c.o"
    clang++-19 "$tmp/c.o" -L$cuda12/lib64 -lcudart -o bin/cluster
    # st.async/red.async (sm_90) into the next CTA of a cluster, packed the same way.
    $SM90 --cuda-device-only -S async_store.cu -o "$tmp/a.ptx"
    fatbinary -64 --create "$tmp/a.fatbin" --image=profile=compute_90,file="$tmp/a.ptx"
    $SM90 --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$tmp/a.fatbin" \
        -c async_store.cu -o "$tmp/a.o"
    clang++-19 "$tmp/a.o" -L$cuda12/lib64 -lcudart -o bin/async_store
    rm -rf "$tmp"
else
    echo "skipped the CUDA 12 programs: no toolchain in $cuda12 (scripts/install-cuda12-toolchain.sh)" >&2
fi
# Thread-block clusters through the driver API (cuLaunchKernelEx, cuOccupancyMaxActiveClusters):
# host-only C++ against CUDA 12's cuda.h.
if [ -f "$cuda12/include/cuda.h" ]; then
    g++ -O2 -x c++ cluster_driver.cu -I"$cuda12/include" -L"$cuda12/lib64/stubs" -lcuda -o bin/cluster_driver
fi
