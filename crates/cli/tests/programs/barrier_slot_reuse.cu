// Barriers while another CTA reuses the warp slots of early exits (regsim issue 15, class
// 2, the case the GPU suites' tree searches hit). Each 512-thread block keeps its first
// four warps in a loop of __syncthreads around shared-memory work (a different number of
// rounds per block, so blocks end at different times) and lets the other twelve return at
// once. When a block ends, the next one takes the lowest free warp slots of the SM, which
// include slots of warps that exited early from blocks still at their barriers: those
// blocks' barrier releases must not touch the newer block's warps waiting at their own
// barrier. Prints PASS or FAIL: <reason>; exits 0 on PASS.
#include <cstdio>
#include <cuda_runtime.h>

#define KEEP 128  // threads that stay: the first four warps

__global__ void barrier_rounds(int* out) {
    __shared__ int stage[KEEP];
    int t = threadIdx.x;
    if (t >= KEEP) return;                   // 24 warps leave before any barrier
    int acc = 0;
    int rounds = 8 + 5 * (blockIdx.x % 7);
    for (int r = 0; r < rounds; ++r) {
        stage[t] = t + r;
        __syncthreads();
        acc += stage[(t + 1) % KEEP];
        __syncthreads();
    }
    out[blockIdx.x * KEEP + t] = acc;
}

int main() {
    const int blocks = 12;
    static int out[blocks * KEEP];
    int* d_out;
    if (cudaMalloc(&d_out, sizeof out) != cudaSuccess) return 2;
    barrier_rounds<<<blocks, 512>>>(d_out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("FAIL: %s\n", cudaGetErrorName(e)); return 1; }
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    for (int b = 0; b < blocks; ++b)
        for (int t = 0; t < KEEP; ++t) {
            int want = 0;
            for (int r = 0; r < 8 + 5 * (b % 7); ++r) want += (t + 1) % KEEP + r;
            if (out[b * KEEP + t] != want) { printf("FAIL: block %d thread %d: %d, want %d\n", b, t, out[b * KEEP + t], want); return 1; }
        }
    printf("PASS\n");
    return 0;
}
