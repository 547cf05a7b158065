// Kernels that never end (regsim issue 26). `never_ends spin` (the default): every thread
// waits for a flag in global memory that nothing sets, as a kernel whose producer was
// never launched does; under `regsim run` it must stop at --max-cycles or --timeout with
// the kernel named, exit status 124 and the statistics so far. `never_ends deadlock`:
// warp 0 waits at named barrier 1 and warp 1 at named barrier 2, each expecting both
// warps, so neither is released; regsim must report the deadlock with each warp's state.
// On a GPU both hang. Would print PASS if the kernel ever returned.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void wait_for_flag(const volatile int* flag, int* out) {
    int spins = 0;
    while (*flag == 0) ++spins;
    out[blockIdx.x * blockDim.x + threadIdx.x] = spins;
}

__global__ void split_barrier(int* out) {
    int warp = threadIdx.x / 32;
    asm volatile("bar.sync %0, 64;" ::"r"(warp + 1));
    out[threadIdx.x] = warp;
}

int main(int argc, char** argv) {
    bool deadlock = argc > 1 && strcmp(argv[1], "deadlock") == 0;
    int *flag, *out;
    if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess || cudaMalloc(&out, 64 * sizeof(int)) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        return 2;
    }
    cudaMemset(flag, 0, sizeof(int));
    if (deadlock) {
        split_barrier<<<1, 64>>>(out);
    } else {
        wait_for_flag<<<1, 64>>>(flag, out);
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "%s\n", cudaGetErrorString(e));
        return 2;
    }
    printf("PASS\n");
    return 0;
}
