// Launches a GPU refuses (regsim issue 15): a zero-sized grid, too many threads per
// block, more shared memory than a block may have, and (on a GPU with 32768 registers
// per block, e.g. regsim's gtx480) more registers than a 1024-thread block may use. Each
// must fail with the CUDA error a GPU gives, and the simulator names kernel and reason
// in one stderr line per refusal. Prints each launch's error; exits 0 when all are as
// expected.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void small(int* out) { out[threadIdx.x] = threadIdx.x; }

extern __shared__ float dyn[];
__global__ void shared_hungry(float* out) { dyn[threadIdx.x] = 1.0f; out[threadIdx.x] = dyn[threadIdx.x ^ 1]; }

// 40 independent accumulators live across the loop: well over 32 registers per thread.
__global__ void register_hungry(const float* in, float* out, int n) {
    float acc[40];
#pragma unroll
    for (int j = 0; j < 40; ++j) acc[j] = in[j];
    for (int i = 0; i < n; ++i) {
#pragma unroll
        for (int j = 0; j < 40; ++j) acc[j] = acc[j] * in[i] + acc[(j + 1) % 40];
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < 40; ++j) s += acc[j];
    out[threadIdx.x] = s;
}

static cudaError_t after_launch() {
    cudaError_t e = cudaGetLastError();
    cudaDeviceSynchronize();
    return e;
}

int main() {
    int* d;
    float *f, *g;
    if (cudaMalloc(&d, 4096) != cudaSuccess || cudaMalloc(&f, 4096) != cudaSuccess ||
        cudaMalloc(&g, 4096) != cudaSuccess) return 2;
    small<<<0, 32>>>(d);
    cudaError_t zero = after_launch();
    small<<<1, 2048>>>(d);
    cudaError_t threads = after_launch();
    shared_hungry<<<1, 32, 1 << 20>>>(f);
    cudaError_t shared = after_launch();
    register_hungry<<<1, 1024>>>(f, g, 4);
    cudaError_t regs = after_launch();
    small<<<1, 32>>>(d);
    cudaError_t fine = after_launch();
    printf("zero grid: %s\nthreads: %s\nshared: %s\nregisters: %s\nafterwards: %s\n",
           cudaGetErrorName(zero), cudaGetErrorName(threads), cudaGetErrorName(shared),
           cudaGetErrorName(regs), cudaGetErrorName(fine));
    return (zero == cudaErrorInvalidConfiguration && threads == cudaErrorInvalidConfiguration &&
            shared == cudaErrorInvalidConfiguration &&
            regs == cudaErrorLaunchOutOfResources && fine == cudaSuccess) ? 0 : 1;
}
