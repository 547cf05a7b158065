// Register-blocked single-precision matrix multiply C = A * B (row-major) with a 128-value
// register block per thread: a CTA of 128 threads computes a 128x128 tile of C, each
// thread an 8x16 sub-block kept in registers across the whole K loop, fed from shared
// memory by 24 loads per 128 FFMAs. ptxas gives it more than 128 registers per thread, so
// its occupancy is limited by registers on every config, and the FFMAs' three register
// sources make the operand collectors busy.
//
// No bounds checks: the host only uses M, N multiples of 128 and K of 8.
#include "../common/workload.h"

#define BLOCK_M 128
#define BLOCK_N 128
#define BLOCK_K 8
#define THREAD_M 8
#define THREAD_N 16
#define GROUPS_M (BLOCK_M / THREAD_M)  // 16
#define GROUPS_N (BLOCK_N / THREAD_N)  // 8
#define THREADS (GROUPS_M * GROUPS_N)  // 128

__global__ void __launch_bounds__(THREADS)
sgemm_reg128(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
             int m, int n, int k) {
    // a_tile is stored k-major so that both tiles are read along rows.
    __shared__ float a_tile[BLOCK_K][BLOCK_M];
    __shared__ float b_tile[BLOCK_K][BLOCK_N];

    int t = threadIdx.x;
    int tn = t % GROUPS_N;
    int tm = t / GROUPS_N;
    int row0 = blockIdx.y * BLOCK_M;
    int col0 = blockIdx.x * BLOCK_N;

    float acc[THREAD_M][THREAD_N];
#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j) acc[i][j] = 0.0f;
    }

    for (int k0 = 0; k0 < k; k0 += BLOCK_K) {
        // Thread t loads row t of the A tile and column t of the B tile.
#pragma unroll
        for (int kk = 0; kk < BLOCK_K; ++kk) {
            a_tile[kk][t] = a[(size_t)(row0 + t) * k + k0 + kk];
            b_tile[kk][t] = b[(size_t)(k0 + kk) * n + col0 + t];
        }
        __syncthreads();

#pragma unroll 2
        for (int kk = 0; kk < BLOCK_K; ++kk) {
            float a_frag[THREAD_M];
            float b_frag[THREAD_N];
            // Strided ownership (row tm + 16i, column tn + 8j) keeps a warp's shared loads
            // free of bank conflicts.
#pragma unroll
            for (int i = 0; i < THREAD_M; ++i) a_frag[i] = a_tile[kk][tm + i * GROUPS_M];
#pragma unroll
            for (int j = 0; j < THREAD_N; ++j) b_frag[j] = b_tile[kk][tn + j * GROUPS_N];
#pragma unroll
            for (int i = 0; i < THREAD_M; ++i) {
#pragma unroll
                for (int j = 0; j < THREAD_N; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j) {
            int row = row0 + tm + i * GROUPS_M;
            int col = col0 + tn + j * GROUPS_N;
            c[(size_t)row * n + col] = acc[i][j];
        }
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int m = 512;
    int n = large ? 768 : 512;
    int k = large ? 256 : 24;
    if (m % BLOCK_M != 0 || n % BLOCK_N != 0 || k % BLOCK_K != 0) {
        fprintf(stderr, "sizes must be multiples of the block shape\n");
        return 2;
    }

    float* h_a = (float*)malloc(sizeof(float) * m * k);
    float* h_b = (float*)malloc(sizeof(float) * k * n);
    float* h_c = (float*)malloc(sizeof(float) * m * n);
    Lcg rng(128128u);
    for (int i = 0; i < m * k; ++i) h_a[i] = rng.range(-1.0f, 1.0f);
    for (int i = 0; i < k * n; ++i) h_b[i] = rng.range(-1.0f, 1.0f);

    float *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, sizeof(float) * m * k));
    CUDA_CHECK(cudaMalloc(&d_b, sizeof(float) * k * n));
    CUDA_CHECK(cudaMalloc(&d_c, sizeof(float) * m * n));
    CUDA_CHECK(cudaMemcpy(d_a, h_a, sizeof(float) * m * k, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b, sizeof(float) * k * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_c, 0, sizeof(float) * m * n));

    dim3 grid(n / BLOCK_N, m / BLOCK_M);
    sgemm_reg128<<<grid, THREADS>>>(d_a, d_b, d_c, m, n, k);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_c, d_c, sizeof(float) * m * n, cudaMemcpyDeviceToHost));

    // Recursive float summation errs by at most about k * 2^-24 * sum|a*b| (1.5e-5 for
    // k = 256); 3e-5 covers that while a lost or repeated k step is far larger.
    int result = -1;
    for (int i = 0; i < m && result < 0; ++i) {
        for (int j = 0; j < n; ++j) {
            double ref = 0.0, mag = 0.0;
            for (int kk = 0; kk < k; ++kk) {
                double p = (double)h_a[i * k + kk] * (double)h_b[kk * n + j];
                ref += p;
                mag += abs_d(p);
            }
            double got = h_c[i * n + j];
            if (abs_d(got - ref) > 3e-5 * mag + 1e-6) {
                result = report_fail("C[%d][%d] = %.7g, expected %.7g", i, j, got, ref);
                break;
            }
        }
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));
    free(h_a);
    free(h_b);
    free(h_c);
    return result < 0 ? report_pass() : result;
}
