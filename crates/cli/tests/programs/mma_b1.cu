// Single-bit tensor-core products (nvcc 11.8, sm_80, inline PTX): a binary GEMM of a
// 32 x 512-bit A and a 512 x 16-bit B, D = popc(A AND B) and D = popc(A XOR B), through
// mma.sync m16n8k256 (both operations), m16n8k128 (AND) and m8n8k128 (XOR), each thread
// gathering its fragments from global memory with the PTX ISA's layout formulas ("Matrix
// Fragments for mma.m8n8k128 / .m16n8k128 / .m16n8k256"). The host checks every element
// against a CPU popcount and prints PASS.
#include <cstdio>
#include <cstdint>
#include <cstdlib>

constexpr int M = 32, N = 16, K = 512;
constexpr int KW = K / 32;  // 32-bit words per row of A (row-major) and column of B

// Bits [k0, k0 + 32) of row `r` of A (or column `r` of B), k0 a multiple of 32.
__device__ uint32_t word(const uint32_t* m, int r, int k0) { return m[r * KW + k0 / 32]; }

// One warp computes a 16 x 8 tile (rows m0.., columns n0..) with m16n8k256 steps.
template <bool And>
__device__ void tile_k256(const uint32_t* a, const uint32_t* b, int32_t* d, int m0, int n0) {
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    int32_t acc[4] = {0, 0, 0, 0};
    for (int k = 0; k < K; k += 256) {
        // A: a0..a31 row g, a32..a63 row g + 8, columns 32t..; a64..a127 the same rows at
        // columns 128 + 32t... B: b0..b31 rows 32t.., b32..b63 rows 128 + 32t.., column g.
        uint32_t a0 = word(a, m0 + g, k + 32 * t), a1 = word(a, m0 + g + 8, k + 32 * t);
        uint32_t a2 = word(a, m0 + g, k + 128 + 32 * t), a3 = word(a, m0 + g + 8, k + 128 + 32 * t);
        uint32_t b0 = word(b, n0 + g, k + 32 * t), b1 = word(b, n0 + g, k + 128 + 32 * t);
        if (And) {
            asm volatile(
                "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
                "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        } else {
            asm volatile(
                "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc "
                "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
    }
    // C/D: c0, c1 row g, columns 2t, 2t + 1; c2, c3 row g + 8.
    for (int i = 0; i < 4; i++)
        d[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + i % 2] = acc[i];
}

// The AND product again with m16n8k128 steps (A: a0..a31 row g, a32..a63 row g + 8).
__device__ void tile_k128_and(const uint32_t* a, const uint32_t* b, int32_t* d, int m0, int n0) {
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    int32_t acc[4] = {0, 0, 0, 0};
    for (int k = 0; k < K; k += 128) {
        uint32_t a0 = word(a, m0 + g, k + 32 * t), a1 = word(a, m0 + g + 8, k + 32 * t);
        uint32_t b0 = word(b, n0 + g, k + 32 * t);
        asm volatile(
            "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc "
            "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
            : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
            : "r"(a0), "r"(a1), "r"(b0));
    }
    for (int i = 0; i < 4; i++)
        d[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + i % 2] = acc[i];
}

// The XOR product with m8n8k128 steps on an 8 x 8 tile (A row g, B column g, D row g,
// columns 2t and 2t + 1).
__device__ void tile_m8_xor(const uint32_t* a, const uint32_t* b, int32_t* d, int m0, int n0) {
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    int32_t acc[2] = {0, 0};
    for (int k = 0; k < K; k += 128) {
        uint32_t a0 = word(a, m0 + g, k + 32 * t), b0 = word(b, n0 + g, k + 32 * t);
        asm volatile(
            "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc "
            "{%0,%1}, {%2}, {%3}, {%0,%1};"
            : "+r"(acc[0]), "+r"(acc[1])
            : "r"(a0), "r"(b0));
    }
    for (int i = 0; i < 2; i++) d[(m0 + g) * N + n0 + 2 * t + i] = acc[i];
}

// Block of 4 warps. d has 4 outputs of M x N: AND (k256), XOR (k256), AND (k128),
// XOR (m8n8k128).
__global__ void binary_gemm(const uint32_t* a, const uint32_t* b, int32_t* d) {
    int warp = threadIdx.x / 32;
    for (int tile = warp; tile < (M / 16) * (N / 8); tile += 4) {
        int m0 = 16 * (tile / (N / 8)), n0 = 8 * (tile % (N / 8));
        tile_k256<true>(a, b, d, m0, n0);
        tile_k256<false>(a, b, d + M * N, m0, n0);
        tile_k128_and(a, b, d + 2 * M * N, m0, n0);
    }
    for (int tile = warp; tile < (M / 8) * (N / 8); tile += 4) {
        int m0 = 8 * (tile / (N / 8)), n0 = 8 * (tile % (N / 8));
        tile_m8_xor(a, b, d + 3 * M * N, m0, n0);
    }
}

int main() {
    static uint32_t a[M * KW], b[N * KW];
    static int32_t d[4 * M * N];
    uint32_t x = 12345;
    auto next = [&] { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x; };
    // Rows of different densities, so that counts spread over 0..K.
    for (int r = 0; r < M; r++)
        for (int w = 0; w < KW; w++) a[r * KW + w] = r % 4 == 0 ? next() & next() : next();
    for (int c = 0; c < N; c++)
        for (int w = 0; w < KW; w++) b[c * KW + w] = c % 3 == 0 ? next() | next() : next();
    uint32_t *da, *db;
    int32_t* dd;
    cudaMalloc(&da, sizeof a);
    cudaMalloc(&db, sizeof b);
    cudaMalloc(&dd, sizeof d);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    cudaMemset(dd, 0xff, sizeof d);
    binary_gemm<<<1, 128>>>(da, db, dd);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        printf("launch failed: %s\n", cudaGetErrorString(err));
        return 1;
    }
    cudaMemcpy(d, dd, sizeof d, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int and_count = 0, xor_count = 0;
            for (int w = 0; w < KW; w++) {
                and_count += __builtin_popcount(a[i * KW + w] & b[j * KW + w]);
                xor_count += __builtin_popcount(a[i * KW + w] ^ b[j * KW + w]);
            }
            int want[4] = {and_count, xor_count, and_count, xor_count};
            for (int v = 0; v < 4; v++) {
                int got = d[v * M * N + i * N + j];
                if (got != want[v] && bad++ < 8)
                    printf("product %d: D[%d][%d] = %d, want %d\n", v, i, j, got, want[v]);
            }
        }
    printf("binary gemm %d x %d x %d bits, and/xor popc: %d wrong\n", M, N, K, bad);
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad != 0;
}
