// Needleman-Wunsch global alignment scores of two sequences over a 24-letter alphabet
// with a substitution table and a linear gap penalty: score[i][j] is the best of the
// diagonal plus the substitution and either neighbour minus the penalty. The matrix is
// cut into 16x16 blocks processed as a wavefront: one launch per anti-diagonal of blocks,
// and inside a block 16 threads sweep its 31 anti-diagonals through shared memory with a
// barrier between them. Integer arithmetic; the host check is exact.
#include "../common/workload.h"

#define B 16
#define ALPHABET 24

__global__ void __launch_bounds__(B)
nw_block(int* __restrict__ score, const int* __restrict__ subst, const unsigned char* __restrict__ a,
         const unsigned char* __restrict__ b, int n, int diagonal, int penalty) {
    // Blocks (bi, bj) with bi + bj == diagonal; blockIdx.x counts from the first valid bi.
    int blocks = n / B;
    int first = diagonal < blocks ? 0 : diagonal - blocks + 1;
    int bi = first + blockIdx.x, bj = diagonal - bi;
    __shared__ int s[B + 1][B + 1];
    __shared__ int sub[B][B];
    int t = threadIdx.x;
    int stride = n + 1;
    int row0 = bi * B, col0 = bj * B;  // the block's cells are rows row0+1.., cols col0+1..
    // Halo: the row above and the column to the left, and the corner.
    s[0][t + 1] = score[row0 * stride + col0 + 1 + t];
    s[t + 1][0] = score[(row0 + 1 + t) * stride + col0];
    if (t == 0) s[0][0] = score[row0 * stride + col0];
    // Row t of the substitution scores of this block.
    int ca = a[row0 + t];
    for (int j = 0; j < B; ++j) sub[t][j] = subst[ca * ALPHABET + b[col0 + j]];
    __syncthreads();
    for (int d = 0; d < 2 * B - 1; ++d) {
        int i = t, j = d - t;
        if (j >= 0 && j < B) {
            int diag = s[i][j] + sub[i][j];
            int up = s[i][j + 1] - penalty;
            int left = s[i + 1][j] - penalty;
            s[i + 1][j + 1] = max(diag, max(up, left));
        }
        __syncthreads();
    }
    for (int j = 0; j < B; ++j) score[(row0 + 1 + t) * stride + col0 + 1 + j] = s[t + 1][j + 1];
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 1024 : 256;  // a multiple of B
    const int penalty = 10;
    int stride = n + 1;
    size_t cells = (size_t)stride * stride;

    unsigned char* h_a = (unsigned char*)malloc(n);
    unsigned char* h_b = (unsigned char*)malloc(n);
    int h_sub[ALPHABET * ALPHABET];
    int* h_score = (int*)malloc(sizeof(int) * cells);
    Lcg rng(99u);
    for (int i = 0; i < ALPHABET; ++i)
        for (int j = 0; j <= i; ++j) {
            int v = i == j ? 4 + (int)rng.below(8) : (int)rng.below(9) - 5;
            h_sub[i * ALPHABET + j] = h_sub[j * ALPHABET + i] = v;
        }
    // b is a mutated copy of a, so the alignment has real structure.
    for (int i = 0; i < n; ++i) h_a[i] = (unsigned char)rng.below(ALPHABET);
    for (int i = 0; i < n; ++i)
        h_b[i] = rng.below(4) == 0 ? (unsigned char)rng.below(ALPHABET) : h_a[(i + 3) % n];
    for (size_t c = 0; c < cells; ++c) h_score[c] = 0;
    for (int i = 0; i <= n; ++i) {
        h_score[(size_t)i * stride] = -penalty * i;
        h_score[i] = -penalty * i;
    }

    int *d_score, *d_sub;
    unsigned char *d_a, *d_b;
    CUDA_CHECK(cudaMalloc(&d_score, sizeof(int) * cells));
    CUDA_CHECK(cudaMalloc(&d_sub, sizeof(h_sub)));
    CUDA_CHECK(cudaMalloc(&d_a, n));
    CUDA_CHECK(cudaMalloc(&d_b, n));
    CUDA_CHECK(cudaMemcpy(d_score, h_score, sizeof(int) * cells, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_sub, h_sub, sizeof(h_sub), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_a, h_a, n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b, n, cudaMemcpyHostToDevice));
    int blocks = n / B;
    for (int d = 0; d < 2 * blocks - 1; ++d) {
        int count = d < blocks ? d + 1 : 2 * blocks - 1 - d;
        nw_block<<<count, B>>>(d_score, d_sub, d_a, d_b, n, d, penalty);
        CUDA_CHECK_LAUNCH();
    }
    int* got = (int*)malloc(sizeof(int) * cells);
    CUDA_CHECK(cudaMemcpy(got, d_score, sizeof(int) * cells, cudaMemcpyDeviceToHost));

    for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= n; ++j) {
            int diag = h_score[(size_t)(i - 1) * stride + j - 1] + h_sub[h_a[i - 1] * ALPHABET + h_b[j - 1]];
            int up = h_score[(size_t)(i - 1) * stride + j] - penalty;
            int left = h_score[(size_t)i * stride + j - 1] - penalty;
            int m = diag > up ? diag : up;
            h_score[(size_t)i * stride + j] = m > left ? m : left;
        }
    int result = -1;
    for (size_t c = 0; c < cells; ++c) {
        if (got[c] != h_score[c]) {
            result = report_fail("score[%zu][%zu] = %d, expected %d", c / stride, c % stride,
                                 got[c], h_score[c]);
            break;
        }
    }
    CUDA_CHECK(cudaFree(d_score));
    CUDA_CHECK(cudaFree(d_sub));
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    free(h_a);
    free(h_b);
    free(h_score);
    free(got);
    return result < 0 ? report_pass() : result;
}
