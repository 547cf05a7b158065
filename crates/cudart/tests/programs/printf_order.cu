// Device printf interleaved with host printf: the output must come out in program order
// even when stdout is a pipe (fully buffered), as with CUDA's own runtime.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void hello(int n) {
    if (threadIdx.x < n) printf("device %d %.2f %s\n", threadIdx.x, 1.5 * threadIdx.x, "ok");
}

int main() {
    printf("before\n");
    hello<<<1, 32>>>(2);
    cudaDeviceSynchronize();
    printf("after\n");
    return 0;
}
