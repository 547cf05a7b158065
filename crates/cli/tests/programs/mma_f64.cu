// Double-precision tensor-core products (nvcc 11.8, sm_90, inline PTX): a 32 x 16 f64 GEMM
// with K = 32, D = A B + C, through mma.sync m16n8k16, m16n8k8 and m16n8k4 .f64 (PTX ISA
// 7.8, sm_90) and m8n8k4 .f64 (sm_80), each warp gathering its fragments from global
// memory with the PTX ISA's layout formulas ("Matrix Fragments for mma.m16n8k4 /
// m16n8k8 / m16n8k16 with .f64", "...for mma.m8n8k4 with .f64"). The inputs are small
// multiples of 1/8, so every partial sum is exact and the host's product is the answer in
// any order; it checks every element of the four results and prints PASS.
#include <cstdio>

constexpr int M = 32, N = 16, K = 32;

// A row-major (M x K), B column-major (K x N: element (k, n) at b[n * K + k]), C and D
// row-major (M x N).
__device__ double at_a(const double* a, int r, int k) { return a[r * K + k]; }
__device__ double at_b(const double* b, int k, int n) { return b[n * K + k]; }

// One warp computes the 16 x 8 tile at (m0, n0) with steps of k = KS.
template <int KS>
__device__ void tile16(const double* a, const double* b, const double* c, double* d, int m0,
                       int n0) {
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    // C and D: c0, c1 row g, c2, c3 row g + 8; column 2t + (i & 1).
    double acc[4];
    for (int i = 0; i < 4; ++i)
        acc[i] = c[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + (i & 1)];
    for (int k = 0; k < K; k += KS) {
        // A: a_i at row g + 8 (i % 2), column t + 4 (i / 2) (m16n8k4: a0 row g, a1 row
        // g + 8, column t); B: b_i at row t + 4i, column g.
        double af[8], bf[4];
        for (int i = 0; i < KS / 2; ++i) af[i] = at_a(a, m0 + g + 8 * (i % 2), k + t + 4 * (i / 2));
        for (int i = 0; i < KS / 4; ++i) bf[i] = at_b(b, k + t + 4 * i, n0 + g);
        if (KS == 16) {
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                         "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
                         : "+d"(acc[0]), "+d"(acc[1]), "+d"(acc[2]), "+d"(acc[3])
                         : "d"(af[0]), "d"(af[1]), "d"(af[2]), "d"(af[3]), "d"(af[4]),
                           "d"(af[5]), "d"(af[6]), "d"(af[7]), "d"(bf[0]), "d"(bf[1]),
                           "d"(bf[2]), "d"(bf[3]));
        } else if (KS == 8) {
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                         "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+d"(acc[0]), "+d"(acc[1]), "+d"(acc[2]), "+d"(acc[3])
                         : "d"(af[0]), "d"(af[1]), "d"(af[2]), "d"(af[3]), "d"(bf[0]),
                           "d"(bf[1]));
        } else {
            asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                         "{%4,%5}, {%6}, {%0,%1,%2,%3};"
                         : "+d"(acc[0]), "+d"(acc[1]), "+d"(acc[2]), "+d"(acc[3])
                         : "d"(af[0]), "d"(af[1]), "d"(bf[0]));
        }
    }
    for (int i = 0; i < 4; ++i) d[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + (i & 1)] = acc[i];
}

// One warp computes the 8 x 8 tile at (m0, n0) with m8n8k4: a0 row g, column t; b0 row
// t, column g; c0, c1 row g, column 2t + i.
__device__ void tile8(const double* a, const double* b, const double* c, double* d, int m0,
                      int n0) {
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    double acc[2] = {c[(m0 + g) * N + n0 + 2 * t], c[(m0 + g) * N + n0 + 2 * t + 1]};
    for (int k = 0; k < K; k += 4) {
        double a0 = at_a(a, m0 + g, k + t), b0 = at_b(b, k + t, n0 + g);
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, "
                     "{%0,%1};"
                     : "+d"(acc[0]), "+d"(acc[1])
                     : "d"(a0), "d"(b0));
    }
    d[(m0 + g) * N + n0 + 2 * t] = acc[0];
    d[(m0 + g) * N + n0 + 2 * t + 1] = acc[1];
}

// Block x uses shape x (0: m16n8k16, 1: m16n8k8, 2: m16n8k4, 3: m8n8k4); its warps cover
// the 32 x 16 result.
__global__ void gemm(const double* a, const double* b, const double* c, double* d) {
    int w = threadIdx.x / 32;
    double* out = d + blockIdx.x * M * N;
    if (blockIdx.x == 3) {
        // 8 warps of 8 x 8 tiles.
        tile8(a, b, c, out, 8 * (w / 2), 8 * (w % 2));
        return;
    }
    if (w >= 4) return;
    int m0 = 16 * (w / 2), n0 = 8 * (w % 2);
    if (blockIdx.x == 0) tile16<16>(a, b, c, out, m0, n0);
    else if (blockIdx.x == 1) tile16<8>(a, b, c, out, m0, n0);
    else tile16<4>(a, b, c, out, m0, n0);
}

int main() {
    static double a[M * K], b[K * N], c[M * N], d[4 * M * N];
    for (int i = 0; i < M * K; ++i) a[i] = ((i * 7) % 17 - 8) / 8.0;
    for (int i = 0; i < K * N; ++i) b[i] = ((i * 5) % 13 - 6) / 4.0;
    for (int i = 0; i < M * N; ++i) c[i] = ((i * 3) % 11 - 5) / 2.0;
    double *da, *db, *dc, *dd;
    cudaMalloc(&da, sizeof a);
    cudaMalloc(&db, sizeof b);
    cudaMalloc(&dc, sizeof c);
    cudaMalloc(&dd, sizeof d);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, c, sizeof c, cudaMemcpyHostToDevice);
    cudaMemset(dd, 0, sizeof d);
    gemm<<<4, 256>>>(da, db, dc, dd);
    if (cudaError_t e = cudaMemcpy(d, dd, sizeof d, cudaMemcpyDeviceToHost)) {
        printf("FAILED: %s\n", cudaGetErrorString(e));
        return 1;
    }
    const char* names[4] = {"m16n8k16", "m16n8k8", "m16n8k4", "m8n8k4"};
    int wrong = 0;
    for (int s = 0; s < 4; ++s)
        for (int r = 0; r < M; ++r)
            for (int n = 0; n < N; ++n) {
                double want = c[r * N + n];
                for (int k = 0; k < K; ++k) want += a[r * K + k] * b[n * K + k];
                double got = d[s * M * N + r * N + n];
                if (got != want && wrong++ < 5)
                    printf("%s: d[%d][%d] = %g, expected %g\n", names[s], r, n, got, want);
            }
    printf("%d wrong\n%s\n", wrong, wrong ? "FAILED" : "PASS");
    return wrong ? 1 : 0;
}
