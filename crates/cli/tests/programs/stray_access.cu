// Stray accesses just outside an allocation (regsim issue 15, class 3). An image filter
// whose edge handling reads one row above the image, 512 bytes before its 64 KB
// allocation (the value is loaded, then discarded for row 0), and a kernel that writes a
// guard word just past the end of a buffer which a second kernel reads back. A GPU maps
// memory in pages far larger than these allocations, so neither access traps; regsim
// allows them with a warning unless `--strict-memory`. With the argument `wild` the
// filter also reads a null-page address, which must fault in every mode.
// Prints PASS or FAIL: <reason>; exits 0 on PASS.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define W 128
#define H 128

__global__ void blur_rows(const float* in, float* out, float* above_raw, int wild) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    float above = in[(y - 1) * W + x];   // row -1 for y == 0: 512 bytes before the image
    above_raw[y * W + x] = above;        // keeps the load
    float c = in[y * W + x];
    out[y * W + x] = 0.5f * c + 0.5f * (y > 0 ? above : c);
    if (wild && x == 0 && y == 0) out[0] = *(volatile const float*)(16);
}

__global__ void write_guard(int* buf, int n) {
    if (threadIdx.x == 0) buf[n] = 0x5ca1ab1e;   // one element past the end
}

__global__ void read_guard(const int* buf, int n, int* result) {
    if (threadIdx.x == 0) *result = buf[n];
}

int main(int argc, char** argv) {
    int wild = argc > 1 && strcmp(argv[1], "wild") == 0;
    static float h_in[W * H], h_out[W * H];
    for (int i = 0; i < W * H; ++i) h_in[i] = (float)(i % 97);
    float *d_in, *d_out, *d_above;
    int *d_buf, *d_result;
    if (cudaMalloc(&d_in, sizeof h_in) != cudaSuccess || cudaMalloc(&d_out, sizeof h_out) != cudaSuccess ||
        cudaMalloc(&d_above, sizeof h_out) != cudaSuccess || cudaMalloc(&d_buf, 100 * sizeof(int)) != cudaSuccess ||
        cudaMalloc(&d_result, sizeof(int)) != cudaSuccess)
        return 2;
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    blur_rows<<<dim3(W / 64, H), 64>>>(d_in, d_out, d_above, wild);
    write_guard<<<1, 32>>>(d_buf, 100);
    read_guard<<<1, 32>>>(d_buf, 100, d_result);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("FAIL: %s\n", cudaGetErrorName(e)); return 1; }
    int result = 0;
    cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
    cudaMemcpy(&result, d_result, sizeof result, cudaMemcpyDeviceToHost);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            float c = h_in[y * W + x], want = 0.5f * c + 0.5f * (y > 0 ? h_in[(y - 1) * W + x] : c);
            if (h_out[y * W + x] != want) { printf("FAIL: out(%d,%d) = %g, want %g\n", x, y, h_out[y * W + x], want); return 1; }
        }
    if (result != 0x5ca1ab1e) { printf("FAIL: the guard word reads %#x\n", result); return 1; }
    printf("PASS\n");
    return 0;
}
