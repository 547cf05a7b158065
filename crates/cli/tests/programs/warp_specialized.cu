// Warp specialisation with setmaxnreg (sm_90a), as CUTLASS's Hopper kernels do it: CTAs
// of 384 threads (launch bounds 384 x 1, 168 registers per thread); the producer
// warpgroup gives registers back (dec to 40) and stages a tile in shared memory, the two
// consumer warpgroups take them (inc to 232) and compute from the tile. Checks its
// result and prints PASS.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kThreads = 384;
constexpr int kTile = 128;

__global__ void __launch_bounds__(kThreads, 1) scale_rows(const float* in, float* out, int n) {
    __shared__ float tile[kTile];
    int wg = threadIdx.x / 128;
    int t = threadIdx.x % 128;
    int row = blockIdx.x;
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        tile[t] = in[row * kTile + t];
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    }
    __syncthreads();
    if (wg != 0) {
        int c = (wg - 1) * 128 + t;  // 256 outputs per row
        float acc = 0.0f;
        for (int k = 0; k < kTile; ++k) acc += tile[k] * (float)((c + k) % 5);
        out[row * 256 + c] = acc;
    }
}

int main() {
    const int rows = 4;
    float h_in[rows * kTile], h_out[rows * 256];
    for (int i = 0; i < rows * kTile; ++i) h_in[i] = (float)(i % 7) - 3.0f;
    float *d_in, *d_out;
    cudaMalloc(&d_in, sizeof h_in);
    cudaMalloc(&d_out, sizeof h_out);
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    scale_rows<<<rows, kThreads>>>(d_in, d_out, rows);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        printf("FAILED: %s\n", cudaGetErrorString(err));
        return 1;
    }
    cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < 256; ++c) {
            float acc = 0.0f;
            for (int k = 0; k < kTile; ++k) acc += h_in[r * kTile + k] * (float)((c + k) % 5);
            if (acc != h_out[r * 256 + c] && bad++ < 5)
                printf("out[%d][%d] = %g, expected %g\n", r, c, h_out[r * 256 + c], acc);
        }
    printf(bad ? "FAILED\n" : "PASS\n");
    return bad ? 1 : 0;
}
