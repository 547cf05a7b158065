// Dense chains of three-source FFMAs: each thread iterates eight coupled affine maps
// x_i <- x_{i+1} * k_i + c_i, with its own coefficients k_i, c_i loaded once into registers,
// so every instruction of the unrolled loop is an FFMA whose three sources are registers
// and nothing in the loop touches memory. With many warps resident this is the kernel
// whose issue rate the register file's banks and operand collectors bound.
//
// |k_i| < 1 keeps the values bounded. The host repeats the same fmaf sequence, which
// rounds once per step exactly as the device's FFMA does, so the check is exact.
#include "../common/workload.h"

#define THREADS 256
#define CHAINS 8

__host__ __device__ inline void step(float (&x)[CHAINS], const float (&k)[CHAINS],
                                     const float (&c)[CHAINS]) {
    float x0 = x[0];
#pragma unroll
    for (int i = 0; i < CHAINS - 1; ++i) x[i] = fmaf(x[i + 1], k[i], c[i]);
    x[CHAINS - 1] = fmaf(x0, k[CHAINS - 1], c[CHAINS - 1]);
}

__global__ void __launch_bounds__(THREADS)
fma_chains(const float* __restrict__ init, const float* __restrict__ coef, float* __restrict__ out,
           int n, int iterations) {
    int t = blockIdx.x * THREADS + threadIdx.x;
    if (t >= n) return;
    float x[CHAINS], k[CHAINS], c[CHAINS];
    // Coefficients come in 64 sets, one per thread modulo 64.
    const float* set = coef + (t % 64) * 2 * CHAINS;
#pragma unroll
    for (int i = 0; i < CHAINS; ++i) {
        x[i] = init[(size_t)i * n + t];
        k[i] = set[i];
        c[i] = set[CHAINS + i];
    }
#pragma unroll 4
    for (int it = 0; it < iterations; ++it) step(x, k, c);
#pragma unroll
    for (int i = 0; i < CHAINS; ++i) out[(size_t)i * n + t] = x[i];
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 65536 : 8192;
    int iterations = large ? 256 : 48;

    float* h_init = (float*)malloc(sizeof(float) * CHAINS * n);
    float* h_out = (float*)malloc(sizeof(float) * CHAINS * n);
    float h_coef[64 * 2 * CHAINS];
    Lcg rng(271828u);
    for (int i = 0; i < CHAINS * n; ++i) h_init[i] = rng.range(-4.0f, 4.0f);
    for (int s = 0; s < 64; ++s)
        for (int i = 0; i < CHAINS; ++i) {
            h_coef[s * 2 * CHAINS + i] = rng.range(-0.95f, 0.95f);
            h_coef[s * 2 * CHAINS + CHAINS + i] = rng.range(-1.0f, 1.0f);
        }

    float *d_init, *d_coef, *d_out;
    CUDA_CHECK(cudaMalloc(&d_init, sizeof(float) * CHAINS * n));
    CUDA_CHECK(cudaMalloc(&d_coef, sizeof(h_coef)));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float) * CHAINS * n));
    CUDA_CHECK(cudaMemcpy(d_init, h_init, sizeof(float) * CHAINS * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_coef, h_coef, sizeof(h_coef), cudaMemcpyHostToDevice));
    fma_chains<<<(n + THREADS - 1) / THREADS, THREADS>>>(d_init, d_coef, d_out, n, iterations);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_out, d_out, sizeof(float) * CHAINS * n, cudaMemcpyDeviceToHost));

    int result = -1;
    for (int t = 0; t < n && result < 0; ++t) {
        float x[CHAINS], k[CHAINS], c[CHAINS];
        for (int i = 0; i < CHAINS; ++i) {
            x[i] = h_init[(size_t)i * n + t];
            k[i] = h_coef[(t % 64) * 2 * CHAINS + i];
            c[i] = h_coef[(t % 64) * 2 * CHAINS + CHAINS + i];
        }
        for (int it = 0; it < iterations; ++it) step(x, k, c);
        for (int i = 0; i < CHAINS; ++i) {
            float got = h_out[(size_t)i * n + t];
            if (memcmp(&got, &x[i], sizeof(float)) != 0) {
                result = report_fail("x%d of thread %d = %.9g, expected %.9g", i, t, got, x[i]);
                break;
            }
        }
    }
    CUDA_CHECK(cudaFree(d_init));
    CUDA_CHECK(cudaFree(d_coef));
    CUDA_CHECK(cudaFree(d_out));
    free(h_init);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
