// A kernel that stores past the end of its buffer: threads 36..63 of CTA 1 write elements
// 100..127 of a 100-float allocation. The simulator must name kernel, PTX line, CTA, thread and address on stderr,
// and the program must see cudaErrorIllegalAddress from its next calls (the error is
// sticky, as on a GPU). The launch itself may report success or the fault, as on a GPU
// where it depends on timing. Prints what each call returned; exits 0 when they are as
// expected.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + 28) out[i] = 1.0f;  // the bug: 28 elements too far
}

int main() {
    float* buf;
    if (cudaMalloc(&buf, 100 * sizeof(float)) != cudaSuccess) return 2;
    fill<<<2, 64>>>(buf, 100);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    void* more;
    cudaError_t later = cudaMalloc(&more, 16);
    printf("launch: %s\nsync: %s\nmalloc: %s\n", cudaGetErrorName(launch),
           cudaGetErrorName(sync), cudaGetErrorName(later));
    return ((launch == cudaSuccess || launch == cudaErrorIllegalAddress) &&
            sync == cudaErrorIllegalAddress &&
            later == cudaErrorIllegalAddress) ? 0 : 1;
}
