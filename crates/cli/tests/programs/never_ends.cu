// Kernels that never end (regsim issue 26). `never_ends spin` (the default): every thread
// waits for a flag in global memory that nothing sets, as a kernel whose producer was
// never launched does; under `regsim run` it must stop at --max-cycles or --timeout with
// the kernel named, exit status 124 and the statistics so far. `never_ends deadlock`:
// warp 0 waits at named barrier 1 and warp 1 at named barrier 2, each expecting both
// warps, so neither is released; regsim must report the deadlock with each warp's state.
// `never_ends sampled [CTA]`: a launch of 8192 CTAs of which one (CTA 700 unless given)
// waits for the flag; long enough for `regsim run --sample` to execute that CTA
// functionally (a skipped stratum), where the run's limits must bound it too.
// On a GPU all hang. Would print PASS if the kernel ever returned.
#include <cstdio>
#include <cstdlib>
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

__global__ void one_cta_waits(const volatile int* flag, int waiter, int* out) {
    int spins = 0;
    if (blockIdx.x == waiter)
        while (*flag == 0) ++spins;
    out[blockIdx.x * blockDim.x + threadIdx.x] = spins;
}

int main(int argc, char** argv) {
    bool deadlock = argc > 1 && strcmp(argv[1], "deadlock") == 0;
    bool sampled = argc > 1 && strcmp(argv[1], "sampled") == 0;
    const int ctas = 8192;
    int *flag, *out;
    if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess ||
        cudaMalloc(&out, ctas * 64 * sizeof(int)) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        return 2;
    }
    cudaMemset(flag, 0, sizeof(int));
    if (deadlock) {
        split_barrier<<<1, 64>>>(out);
    } else if (sampled) {
        one_cta_waits<<<ctas, 64>>>(flag, argc > 2 ? atoi(argv[2]) : 700, out);
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
