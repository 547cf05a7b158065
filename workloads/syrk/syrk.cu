// Symmetric rank-k update C = alpha A A^T + beta C (A is n x k, row-major), one thread per
// element of C as in the usual GPU formulation: thread (i, j) walks rows i and j of A.
// Consecutive lanes take consecutive j, so every warp load reads 32 different rows (a
// line each) and each line is reused over the next iterations of k: the whole of A
// (128 x 96 floats, 48 KB) is the working set, larger than a 16 KB L1D and smaller than
// a 64 KB one.
#include "../common/workload.h"

__global__ void syrk(const float* __restrict__ a, float* __restrict__ c, int n, int k,
                     float alpha, float beta) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y;
    if (j >= n) return;
    float sum = 0.0f;
    for (int l = 0; l < k; ++l) sum += a[i * k + l] * a[j * k + l];
    c[i * n + j] = alpha * sum + beta * c[i * n + j];
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 512 : 128;
    int k = large ? 192 : 96;
    const float alpha = 1.5f, beta = 0.5f;
    const int threads = 64;

    Lcg rng(1729u);
    float* h_a = (float*)malloc(sizeof(float) * n * k);
    float* h_c = (float*)malloc(sizeof(float) * n * n);
    float* h_out = (float*)malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * k; ++i) h_a[i] = rng.range(-1.0f, 1.0f);
    for (int i = 0; i < n * n; ++i) h_c[i] = rng.range(-1.0f, 1.0f);

    float *d_a, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, sizeof(float) * n * k));
    CUDA_CHECK(cudaMalloc(&d_c, sizeof(float) * n * n));
    CUDA_CHECK(cudaMemcpy(d_a, h_a, sizeof(float) * n * k, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_c, h_c, sizeof(float) * n * n, cudaMemcpyHostToDevice));

    dim3 grid((n + threads - 1) / threads, n);
    syrk<<<grid, threads>>>(d_a, d_c, n, k, alpha, beta);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_out, d_c, sizeof(float) * n * n, cudaMemcpyDeviceToHost));

    // k <= 192 products summed in float, then scaled: the error is below
    // (k + 3) * 2^-24 * (|alpha| sum|a a| + |beta c|) < 1.2e-5 of that magnitude.
    int result = -1;
    for (int i = 0; i < n && result < 0; ++i) {
        for (int j = 0; j < n; ++j) {
            double s = 0.0, mag = 0.0;
            for (int l = 0; l < k; ++l) {
                double p = (double)h_a[i * k + l] * (double)h_a[j * k + l];
                s += p;
                mag += abs_d(p);
            }
            double ref = alpha * s + beta * (double)h_c[i * n + j];
            double bound = alpha * mag + abs_d(beta * (double)h_c[i * n + j]);
            double got = h_out[i * n + j];
            if (!(abs_d(got - ref) <= 2e-5 * bound + 1e-7)) {
                result = report_fail("c[%d][%d] = %.7g, expected %.7g", i, j, got, ref);
                break;
            }
        }
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_c));
    free(h_a);
    free(h_c);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
