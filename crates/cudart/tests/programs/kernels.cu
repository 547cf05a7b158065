// Kernels for the fatbinary tests: built several ways by build.sh (default, compressed,
// several PTX architectures, machine code only). main() launches one kernel and checks it.
#include <cstdio>
#include <cuda_runtime.h>

__device__ int counter[4];
__constant__ float scale[2];

__global__ void axpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * scale[0] * x[i] + y[i];
}

__global__ void count(int* out) {
    atomicAdd(&counter[threadIdx.x % 4], 1);
    if (threadIdx.x == 0) *out = counter[0];
}

int main() {
    const int n = 1000;
    float hx[n], hy[n];
    for (int i = 0; i < n; ++i) { hx[i] = (float)i; hy[i] = 1.0f; }
    float h_scale[2] = {2.0f, 0.0f};
    float *x, *y;
    if (cudaMalloc(&x, sizeof hx) || cudaMalloc(&y, sizeof hy)) return 2;
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice);
    cudaMemcpyToSymbol(scale, h_scale, sizeof h_scale);
    axpy<<<(n + 127) / 128, 128>>>(n, 0.5f, x, y);
    cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess) err = cudaGetLastError();
    if (err != cudaSuccess) {
        printf("launch failed: %s (%s)\n", cudaGetErrorName(err), cudaGetErrorString(err));
        return 3;
    }
    cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) {
        if (hy[i] != (float)i + 1.0f) {
            printf("FAIL: y[%d] = %g\n", i, hy[i]);
            return 1;
        }
    }
    printf("PASS\n");
    return 0;
}
