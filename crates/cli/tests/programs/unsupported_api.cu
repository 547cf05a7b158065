// Calls a runtime function the simulator does not implement (stream capture for CUDA
// graphs). The call must fail with cudaErrorNotSupported after one line on stderr naming
// it, and the program must go on running kernels normally.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void one(int* p) { *p = 1; }

int main() {
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess) return 2;
    cudaError_t capture = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaGetLastError();
    int* d;
    int h = 0;
    cudaMalloc(&d, sizeof(int));
    one<<<1, 1>>>(d);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("capture: %s\nkernel: %d\n", cudaGetErrorName(capture), h);
    return (capture == cudaErrorNotSupported && h == 1) ? 0 : 1;
}
