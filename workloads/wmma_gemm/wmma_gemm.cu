// arch: sm_80
// Half-precision GEMM on the tensor cores through the wmma API (16x16x16 fragments,
// f32 accumulation), built for sm_80:
//
//   hgemm_shared: D = alpha * A B + beta * C with A (M x K) and B (K x N) row-major half,
//   C and D row-major float. A CTA of four warps computes a 32x32 tile; per k-step of 16
//   the CTA stages A's 32x16 and B's 16x32 slices in shared memory and each warp loads
//   its fragments from there (wmma.load from .shared), accumulates with wmma.mma, then
//   scales the accumulator element by element and adds beta * C loaded as an
//   accumulator fragment (wmma.load.c).
//   bf16_gemm: D = A B with bf16 inputs, B column-major, one warp per 16x16 tile, fragments
//   loaded straight from global memory.
//
// The check is exact: every input is a multiple of 1/16 in [-1, 1], so every product is a
// multiple of 1/256 below 1 in magnitude, every partial sum of at most K = 384 of them
// fits f32's 24 bits exactly, and alpha = 2, beta = 0.5 scale exactly; the result does
// not depend on the order or rounding of the accumulation.
#include <mma.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "../common/workload.h"

using namespace nvcuda;

#define TILE 16
#define CTA_TILE 32
#define WARPS 4

__global__ void __launch_bounds__(WARPS * 32)
hgemm_shared(const half* __restrict__ a, const half* __restrict__ b, const float* __restrict__ c,
             float* __restrict__ d, int m, int n, int k, float alpha, float beta) {
    __shared__ half sa[CTA_TILE * TILE];
    __shared__ half sb[TILE * CTA_TILE];
    int warp = threadIdx.x / 32;
    int wr = warp / 2, wc = warp % 2;
    int row0 = blockIdx.y * CTA_TILE, col0 = blockIdx.x * CTA_TILE;

    wmma::fragment<wmma::accumulator, TILE, TILE, TILE, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < k; k0 += TILE) {
        // 512 halves of A's slice and 512 of B's, four per thread each.
        for (int i = threadIdx.x; i < CTA_TILE * TILE; i += WARPS * 32) {
            sa[i] = a[(size_t)(row0 + i / TILE) * k + k0 + i % TILE];
            sb[i] = b[(size_t)(k0 + i / CTA_TILE) * n + col0 + i % CTA_TILE];
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, TILE, TILE, TILE, half, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, TILE, TILE, TILE, half, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, sa + wr * TILE * TILE, TILE);
        wmma::load_matrix_sync(fb, sb + wc * TILE, CTA_TILE);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncthreads();
    }
    size_t offset = (size_t)(row0 + wr * TILE) * n + col0 + wc * TILE;
    wmma::fragment<wmma::accumulator, TILE, TILE, TILE, float> fc;
    wmma::load_matrix_sync(fc, c + offset, n, wmma::mem_row_major);
    for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = alpha * acc.x[i] + beta * fc.x[i];
    wmma::store_matrix_sync(d + offset, acc, n, wmma::mem_row_major);
}

__global__ void bf16_gemm(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                          float* __restrict__ d, int m, int n, int k) {
    int tile = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int tiles_n = n / TILE;
    if (tile >= (m / TILE) * tiles_n) return;
    int row0 = tile / tiles_n * TILE, col0 = tile % tiles_n * TILE;
    wmma::fragment<wmma::accumulator, TILE, TILE, TILE, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < k; k0 += TILE) {
        wmma::fragment<wmma::matrix_a, TILE, TILE, TILE, __nv_bfloat16, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, TILE, TILE, TILE, __nv_bfloat16, wmma::col_major> fb;
        wmma::load_matrix_sync(fa, a + (size_t)row0 * k + k0, k);
        // B column-major: element (kk, j) at b[j * k + kk].
        wmma::load_matrix_sync(fb, b + (size_t)col0 * k + k0, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(d + (size_t)row0 * n + col0, acc, n, wmma::mem_row_major);
}

// A multiple of 1/16 in [-1, 1].
static float sixteenth(Lcg& rng) { return ((int)rng.below(33) - 16) / 16.0f; }

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int m = large ? 384 : 128, n = large ? 384 : 128, k = large ? 384 : 128;
    const float alpha = 2.0f, beta = 0.5f;

    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    float* fa = (float*)malloc(sizeof(float) * na);
    float* fb = (float*)malloc(sizeof(float) * nb);
    float* fc = (float*)malloc(sizeof(float) * nc);
    float* got = (float*)malloc(sizeof(float) * nc);
    half* ha = (half*)malloc(sizeof(half) * na);
    half* hb = (half*)malloc(sizeof(half) * nb);
    __nv_bfloat16* ba = (__nv_bfloat16*)malloc(sizeof(__nv_bfloat16) * na);
    __nv_bfloat16* bb = (__nv_bfloat16*)malloc(sizeof(__nv_bfloat16) * nb);
    Lcg rng(16161u);
    for (size_t i = 0; i < na; ++i) {
        fa[i] = sixteenth(rng);
        ha[i] = __float2half(fa[i]);
        ba[i] = __float2bfloat16(fa[i]);
    }
    for (size_t i = 0; i < nb; ++i) {
        fb[i] = sixteenth(rng);
        hb[i] = __float2half(fb[i]);
    }
    // bf16 B is column-major: (kk, j) at j * k + kk.
    for (int kk = 0; kk < k; ++kk)
        for (int j = 0; j < n; ++j) bb[(size_t)j * k + kk] = __float2bfloat16(fb[(size_t)kk * n + j]);
    for (size_t i = 0; i < nc; ++i) fc[i] = sixteenth(rng);

    half *d_ha, *d_hb;
    __nv_bfloat16 *d_ba, *d_bb;
    float *d_c, *d_d, *d_e;
    CUDA_CHECK(cudaMalloc(&d_ha, sizeof(half) * na));
    CUDA_CHECK(cudaMalloc(&d_hb, sizeof(half) * nb));
    CUDA_CHECK(cudaMalloc(&d_ba, sizeof(__nv_bfloat16) * na));
    CUDA_CHECK(cudaMalloc(&d_bb, sizeof(__nv_bfloat16) * nb));
    CUDA_CHECK(cudaMalloc(&d_c, sizeof(float) * nc));
    CUDA_CHECK(cudaMalloc(&d_d, sizeof(float) * nc));
    CUDA_CHECK(cudaMalloc(&d_e, sizeof(float) * nc));
    CUDA_CHECK(cudaMemcpy(d_ha, ha, sizeof(half) * na, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_hb, hb, sizeof(half) * nb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_ba, ba, sizeof(__nv_bfloat16) * na, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_bb, bb, sizeof(__nv_bfloat16) * nb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_c, fc, sizeof(float) * nc, cudaMemcpyHostToDevice));

    dim3 grid(n / CTA_TILE, m / CTA_TILE);
    hgemm_shared<<<grid, WARPS * 32>>>(d_ha, d_hb, d_c, d_d, m, n, k, alpha, beta);
    CUDA_CHECK_LAUNCH();
    int tiles = (m / TILE) * (n / TILE);
    bf16_gemm<<<(tiles + 3) / 4, 128>>>(d_ba, d_bb, d_e, m, n, k);
    CUDA_CHECK_LAUNCH();

    int result = -1;
    CUDA_CHECK(cudaMemcpy(got, d_d, sizeof(float) * nc, cudaMemcpyDeviceToHost));
    for (int i = 0; i < m && result < 0; ++i)
        for (int j = 0; j < n; ++j) {
            float s = 0.0f;
            for (int kk = 0; kk < k; ++kk) s += fa[(size_t)i * k + kk] * fb[(size_t)kk * n + j];
            float want = alpha * s + beta * fc[(size_t)i * n + j];
            if (got[(size_t)i * n + j] != want) {
                result = report_fail("half D[%d][%d] = %.9g, expected %.9g", i, j,
                                     got[(size_t)i * n + j], want);
                break;
            }
        }
    CUDA_CHECK(cudaMemcpy(got, d_e, sizeof(float) * nc, cudaMemcpyDeviceToHost));
    for (int i = 0; i < m && result < 0; ++i)
        for (int j = 0; j < n; ++j) {
            float s = 0.0f;
            for (int kk = 0; kk < k; ++kk) s += fa[(size_t)i * k + kk] * fb[(size_t)kk * n + j];
            if (got[(size_t)i * n + j] != s) {
                result = report_fail("bf16 D[%d][%d] = %.9g, expected %.9g", i, j,
                                     got[(size_t)i * n + j], s);
                break;
            }
        }
    CUDA_CHECK(cudaFree(d_ha));
    CUDA_CHECK(cudaFree(d_hb));
    CUDA_CHECK(cudaFree(d_ba));
    CUDA_CHECK(cudaFree(d_bb));
    CUDA_CHECK(cudaFree(d_c));
    CUDA_CHECK(cudaFree(d_d));
    CUDA_CHECK(cudaFree(d_e));
    free(fa);
    free(fb);
    free(fc);
    free(got);
    free(ha);
    free(hb);
    free(ba);
    free(bb);
    return result < 0 ? report_pass() : result;
}
