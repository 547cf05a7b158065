// Matrix-vector product y = A x with one thread per row of a wide row-major matrix:
// rows are 1024 floats (4 KB) apart, so each warp load touches 32 cache lines that are
// all 4 KB apart (one set of an L1 whose index bits lie below bit 12, unless the index is
// hashed), and each line is reused by its thread over the next 31 iterations. The case
// of issue 8: an unhashed L1D thrashes on it; x is read by every lane at once
// (a broadcast).
#include "../common/workload.h"

__global__ void matvec_rows(const float* __restrict__ a, const float* __restrict__ x,
                            float* __restrict__ y, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* r = a + (size_t)row * cols;
    float sum = 0.0f;
    for (int j = 0; j < cols; ++j) sum += r[j] * x[j];
    y[row] = sum;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    const int cols = 1024;  // 4 KB rows
    int rows = large ? 16384 + 32 : 512 + 32;
    const int threads = 128;

    Lcg rng(4096u);
    size_t elems = (size_t)rows * cols;
    float* h_a = (float*)malloc(sizeof(float) * elems);
    float* h_x = (float*)malloc(sizeof(float) * cols);
    float* h_y = (float*)malloc(sizeof(float) * rows);
    for (size_t i = 0; i < elems; ++i) h_a[i] = rng.range(-1.0f, 1.0f);
    for (int j = 0; j < cols; ++j) h_x[j] = rng.range(-1.0f, 1.0f);

    float *d_a, *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_a, sizeof(float) * elems));
    CUDA_CHECK(cudaMalloc(&d_x, sizeof(float) * cols));
    CUDA_CHECK(cudaMalloc(&d_y, sizeof(float) * rows));
    CUDA_CHECK(cudaMemcpy(d_a, h_a, sizeof(float) * elems, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, sizeof(float) * cols, cudaMemcpyHostToDevice));
    // A NaN sentinel: a row the kernel skipped keeps it and fails the check.
    CUDA_CHECK(cudaMemset(d_y, 0xff, sizeof(float) * rows));

    matvec_rows<<<(rows + threads - 1) / threads, threads>>>(d_a, d_x, d_y, rows, cols);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_y, d_y, sizeof(float) * rows, cudaMemcpyDeviceToHost));

    // 1024 float multiply-adds in sequence (possibly contracted to FMA): the error is
    // below 1024 * 2^-24 * sum|a*x| < 6.2e-5 * sum|a*x|.
    int result = -1;
    for (int r = 0; r < rows && result < 0; ++r) {
        double ref = 0.0, mag = 0.0;
        for (int j = 0; j < cols; ++j) {
            double p = (double)h_a[(size_t)r * cols + j] * (double)h_x[j];
            ref += p;
            mag += abs_d(p);
        }
        double got = h_y[r];
        if (!(abs_d(got - ref) <= 1e-4 * mag + 1e-7)) {
            result = report_fail("y[%d] = %.7g, expected %.7g", r, got, ref);
        }
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    free(h_a);
    free(h_x);
    free(h_y);
    return result < 0 ? report_pass() : result;
}
