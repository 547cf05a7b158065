// Volta's quad-pair tensor-core product (nvcc 11.8, sm_70, inline PTX): mma.sync
// m8n8k4 with f16 inputs under all four .row/.col combinations, with f32 and f16
// accumulators. Each warp computes a 16 x 16 result, D = A B + C with K = 16: quad pair
// p (lanes 4p..4p+3 and 4p+16..4p+19) owns the 8 x 8 tile (8 (p / 2), 8 (p % 2)) and
// gathers its fragments from global memory with the PTX ISA's layout formulas ("Matrix
// Fragments for mma.m8n8k4 with .f16 floating point type"). Inputs are small multiples
// of 1/4, so every sum is exact; the host checks every element and prints PASS.
#include <cstdio>
#include <cuda_fp16.h>

constexpr int M = 16, N = 16, K = 16;

__device__ unsigned pack(__half lo, __half hi) {
    return (unsigned)__half_as_ushort(lo) | ((unsigned)__half_as_ushort(hi) << 16);
}

// A row-major (M x K), B row-major (K x N), C and D row-major (M x N), f32.
template <bool ARow, bool BRow, bool F32Acc>
__device__ void tile(const float* a, const float* b, const float* c, float* d) {
    int lane = threadIdx.x % 32, p = (lane / 4) % 4, q = lane % 4, h = lane >= 16 ? 4 : 0;
    int m0 = 8 * (p / 2), n0 = 8 * (p % 2);
    // C/D element i: f16 at row q + h, column i; f32 at row (q & 1) + (i & 2) + h, column
    // (q & 2) + (i & 1) + (i & 4).
    auto row_of = [&](int i) { return F32Acc ? (q & 1) + (i & 2) + h : q + h; };
    auto col_of = [&](int i) { return F32Acc ? (q & 2) + (i & 1) + (i & 4) : i; };
    float acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = c[(m0 + row_of(i)) * N + n0 + col_of(i)];
    unsigned hacc[4];
    for (int i = 0; i < 4; ++i)
        hacc[i] = pack(__float2half(acc[2 * i]), __float2half(acc[2 * i + 1]));
    for (int k0 = 0; k0 < K; k0 += 4) {
        __half av[4], bv[4];
        for (int i = 0; i < 4; ++i) {
            // A .row: row q + h, column i; .col: row i + h, column q.
            int ar = ARow ? q + h : i + h, ak = ARow ? i : q;
            // B .row: row q, column i + h; .col: row i, column q + h.
            int bk = BRow ? q : i, bn = BRow ? i + h : q + h;
            av[i] = __float2half(a[(m0 + ar) * K + k0 + ak]);
            bv[i] = __float2half(b[(k0 + bk) * N + n0 + bn]);
        }
        unsigned a0 = pack(av[0], av[1]), a1 = pack(av[2], av[3]);
        unsigned b0 = pack(bv[0], bv[1]), b1 = pack(bv[2], bv[3]);
#define MMA_F32(AL, BL)                                                                       \
    asm volatile("mma.sync.aligned.m8n8k4." AL "." BL ".f32.f16.f16.f32 "                     \
                 "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%0,%1,%2,%3,%4,%5,%6,%7};" \
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),     \
                   "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7])                                  \
                 : "r"(a0), "r"(a1), "r"(b0), "r"(b1))
#define MMA_F16(AL, BL)                                                                       \
    asm volatile("mma.sync.aligned.m8n8k4." AL "." BL ".f16.f16.f16.f16 "                     \
                 "{%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%0,%1,%2,%3};"                           \
                 : "+r"(hacc[0]), "+r"(hacc[1]), "+r"(hacc[2]), "+r"(hacc[3])                 \
                 : "r"(a0), "r"(a1), "r"(b0), "r"(b1))
        if (F32Acc) {
            if (ARow && BRow) MMA_F32("row", "row");
            else if (ARow) MMA_F32("row", "col");
            else if (BRow) MMA_F32("col", "row");
            else MMA_F32("col", "col");
        } else {
            if (ARow && BRow) MMA_F16("row", "row");
            else if (ARow) MMA_F16("row", "col");
            else if (BRow) MMA_F16("col", "row");
            else MMA_F16("col", "col");
        }
    }
    if (!F32Acc)
        for (int i = 0; i < 8; ++i)
            acc[i] = __half2float(__ushort_as_half((unsigned short)(hacc[i / 2] >> (16 * (i % 2)))));
    for (int i = 0; i < 8; ++i) d[(m0 + row_of(i)) * N + n0 + col_of(i)] = acc[i];
}

// Warp w: layouts (w & 1: A row, w & 2: B row), w & 4: f32 accumulators.
__global__ void gemm(const float* a, const float* b, const float* c, float* d) {
    int w = threadIdx.x / 32;
    float* out = d + w * M * N;
    switch (w) {
    case 0: tile<false, false, false>(a, b, c, out); break;
    case 1: tile<true, false, false>(a, b, c, out); break;
    case 2: tile<false, true, false>(a, b, c, out); break;
    case 3: tile<true, true, false>(a, b, c, out); break;
    case 4: tile<false, false, true>(a, b, c, out); break;
    case 5: tile<true, false, true>(a, b, c, out); break;
    case 6: tile<false, true, true>(a, b, c, out); break;
    default: tile<true, true, true>(a, b, c, out); break;
    }
}

int main() {
    static float a[M * K], b[K * N], c[M * N], d[8 * M * N];
    for (int i = 0; i < M * K; ++i) a[i] = ((i * 7) % 9 - 4) / 4.0f;
    for (int i = 0; i < K * N; ++i) b[i] = ((i * 5) % 7 - 3) / 2.0f;
    for (int i = 0; i < M * N; ++i) c[i] = ((i * 3) % 11 - 5) / 4.0f;
    float *da, *db, *dc, *dd;
    cudaMalloc(&da, sizeof a);
    cudaMalloc(&db, sizeof b);
    cudaMalloc(&dc, sizeof c);
    cudaMalloc(&dd, sizeof d);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, c, sizeof c, cudaMemcpyHostToDevice);
    gemm<<<1, 256>>>(da, db, dc, dd);
    if (cudaError_t e = cudaMemcpy(d, dd, sizeof d, cudaMemcpyDeviceToHost)) {
        printf("FAILED: %s\n", cudaGetErrorString(e));
        return 1;
    }
    int wrong = 0;
    for (int w = 0; w < 8; ++w)
        for (int r = 0; r < M; ++r)
            for (int n = 0; n < N; ++n) {
                float want = c[r * N + n];
                for (int k = 0; k < K; ++k) want += a[r * K + k] * b[k * N + n];
                float got = d[w * M * N + r * N + n];
                if (got != want && wrong++ < 5)
                    printf("variant %d: d[%d][%d] = %g, expected %g\n", w, r, n, got, want);
            }
    printf("%d wrong\n%s\n", wrong, wrong ? "FAILED" : "PASS");
    return wrong ? 1 : 0;
}
