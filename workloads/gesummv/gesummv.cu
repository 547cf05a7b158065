// y = alpha A x + beta B x with one thread per row of two square row-major matrices (the
// GESUMMV kernel of the Polybench GPU suite, written afresh). Every warp load reads 32
// rows 2 KB apart in each matrix, and each line is reused by its thread over the next
// 31 iterations: a memory-bound, low-IPC kernel like matvec_rows with two streams that
// compete for the L1D's sets and MSHRs.
#include "../common/workload.h"

__global__ void gesummv(const float* __restrict__ a, const float* __restrict__ b,
                        const float* __restrict__ x, float* __restrict__ y, float alpha,
                        float beta, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* ra = a + (size_t)i * n;
    const float* rb = b + (size_t)i * n;
    float sa = 0.0f, sb = 0.0f;
    for (int j = 0; j < n; ++j) {
        float xj = x[j];
        sa += ra[j] * xj;
        sb += rb[j] * xj;
    }
    y[i] = alpha * sa + beta * sb;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 4096 : 512;  // 2 KB rows by default
    const int threads = 32;
    const float alpha = 1.5f, beta = -0.75f;

    Lcg rng(2718u);
    size_t elems = (size_t)n * n;
    float* h_a = (float*)malloc(sizeof(float) * elems);
    float* h_b = (float*)malloc(sizeof(float) * elems);
    float* h_x = (float*)malloc(sizeof(float) * n);
    float* h_y = (float*)malloc(sizeof(float) * n);
    for (size_t i = 0; i < elems; ++i) h_a[i] = rng.range(-1.0f, 1.0f);
    for (size_t i = 0; i < elems; ++i) h_b[i] = rng.range(-1.0f, 1.0f);
    for (int j = 0; j < n; ++j) h_x[j] = rng.range(-1.0f, 1.0f);

    float *d_a, *d_b, *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_a, sizeof(float) * elems));
    CUDA_CHECK(cudaMalloc(&d_b, sizeof(float) * elems));
    CUDA_CHECK(cudaMalloc(&d_x, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_y, sizeof(float) * n));
    CUDA_CHECK(cudaMemcpy(d_a, h_a, sizeof(float) * elems, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b, sizeof(float) * elems, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, sizeof(float) * n, cudaMemcpyHostToDevice));
    // A NaN sentinel: a row the kernel skipped keeps it and fails the check.
    CUDA_CHECK(cudaMemset(d_y, 0xff, sizeof(float) * n));

    gesummv<<<(n + threads - 1) / threads, threads>>>(d_a, d_b, d_x, d_y, alpha, beta, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_y, d_y, sizeof(float) * n, cudaMemcpyDeviceToHost));

    // n float multiply-adds in sequence per sum (possibly contracted to FMA), then two
    // products and an add: the error is below (n + 3) * 2^-24 * (|alpha| sum|a x| +
    // |beta| sum|b x|); the check allows (2n + 16) * 2^-24 of that bound.
    int result = -1;
    double tolerance = (2.0 * n + 16.0) / 16777216.0;
    for (int i = 0; i < n && result < 0; ++i) {
        double sa = 0.0, sb = 0.0, ma = 0.0, mb = 0.0;
        for (int j = 0; j < n; ++j) {
            double pa = (double)h_a[(size_t)i * n + j] * (double)h_x[j];
            double pb = (double)h_b[(size_t)i * n + j] * (double)h_x[j];
            sa += pa;
            sb += pb;
            ma += abs_d(pa);
            mb += abs_d(pb);
        }
        double ref = (double)alpha * sa + (double)beta * sb;
        double bound = abs_d(alpha) * ma + abs_d(beta) * mb;
        double got = h_y[i];
        if (!(abs_d(got - ref) <= tolerance * bound + 1e-7)) {
            result = report_fail("y[%d] = %.7g, expected %.7g", i, got, ref);
        }
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    free(h_a);
    free(h_b);
    free(h_x);
    free(h_y);
    return result < 0 ? report_pass() : result;
}
