// wmma of every type nvcc 11.8 emits for sm_80 (<mma.h>): tf32 m16n16k8, double m8n8k4,
// __half m32n8k16 and m8n32k16 (float accumulators),
// signed/unsigned char m16n16k16, m32n8k16 and m8n32k16 (with and without saturation),
// experimental::precision::s4/u4 m8n8k32 and b1 m8n8k128 (XOR and AND popc). Each case is
// a small GEMM D = A x B + C, one warp per output tile, through load_matrix_sync,
// mma_sync/bmma_sync and store_matrix_sync only (every row/column layout the API allows),
// checked element by element against a host product. Floating-point results may differ
// from the host's FMA chain in the last bits on a GPU (its adders truncate), so they pass
// within a relative 1e-5 (tf32) or 1e-12 (double); "exact" counts the bit-identical ones.
// Integer results must be exact. Prints one line per case and PASS.
#include <cuda_fp16.h>
#include <mma.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace nvcuda;
namespace exp_prec = wmma::experimental::precision;

static int failures = 0;

#define CHECK(x)                                                              \
    do {                                                                      \
        cudaError_t e_ = (x);                                                 \
        if (e_ != cudaSuccess) {                                              \
            printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

template <typename T>
T* to_device(const std::vector<T>& h) {
    T* d;
    CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
    CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

template <typename T>
std::vector<T> to_host(const T* d, size_t n) {
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

// Index of (r, c) in a matrix of `rows` x `cols` stored row-major (true) or column-major.
static inline size_t at(bool row_major, int rows, int cols, int r, int c) {
    return row_major ? size_t(r) * cols + c : size_t(c) * rows + r;
}

static uint32_t lcg = 12345;
static uint32_t next_rand() {
    lcg = lcg * 1664525u + 1013904223u;
    return lcg >> 8;
}

// ---------------------------------------------------------------------------------------
// The generic GEMM: M x N x K, tiles TM x TN x TK, one warp a tile. LA/LB: layouts of A
// and B in memory (and of their fragments); C is read row-major, D is stored with LD.
template <int TM, int TN, int TK, typename AT, typename ET, typename CT, typename LA, typename LB,
          bool TF32>
__global__ void gemm(const ET* a, const ET* b, const CT* c, CT* d, int M, int N, int K, bool satf,
                     bool d_row) {
    int tm = blockIdx.x, tn = blockIdx.y;
    constexpr bool a_row = std::is_same<LA, wmma::row_major>::value;
    constexpr bool b_row = std::is_same<LB, wmma::row_major>::value;
    wmma::fragment<wmma::matrix_a, TM, TN, TK, AT, LA> fa;
    wmma::fragment<wmma::matrix_b, TM, TN, TK, AT, LB> fb;
    wmma::fragment<wmma::accumulator, TM, TN, TK, CT> fc;
    wmma::load_matrix_sync(fc, c + size_t(tm) * TM * N + tn * TN, N, wmma::mem_row_major);
    for (int k = 0; k < K; k += TK) {
        const ET* pa = a_row ? a + size_t(tm) * TM * K + k : a + size_t(k) * M + tm * TM;
        const ET* pb = b_row ? b + size_t(k) * N + tn * TN : b + size_t(tn) * TN * K + k;
        wmma::load_matrix_sync(fa, pa, a_row ? K : M);
        wmma::load_matrix_sync(fb, pb, b_row ? N : K);
        if (TF32) {
            // The Programming Guide's recipe: round each element to tf32 first.
            for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
            for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
        }
        if constexpr (std::is_same<CT, int>::value) {
            wmma::mma_sync(fc, fa, fb, fc, satf);
        } else {
            wmma::mma_sync(fc, fa, fb, fc);
        }
    }
    CT* pd = d_row ? d + size_t(tm) * TM * N + tn * TN : d + size_t(tn) * TN * M + tm * TM;
    wmma::store_matrix_sync(pd, fc, d_row ? N : M, d_row ? wmma::mem_row_major : wmma::mem_col_major);
}

// cvt.rna.tf32.f32 on the host: round to 10 mantissa bits, ties away from zero.
static float tf32_rna(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&x, &u, 4);
    return x;
}

static inline float as_float(__half x) { return __half2float(x); }
static inline float as_float(float x) { return x; }
static inline double as_float(double x) { return x; }

template <int TM, int TN, int TK, typename AT, typename ET, typename CT, typename LA, typename LB,
          bool TF32>
void run_float(const char* name, int M, int N, int K, double tol, bool d_row) {
    constexpr bool a_row = std::is_same<LA, wmma::row_major>::value;
    constexpr bool b_row = std::is_same<LB, wmma::row_major>::value;
    std::vector<ET> a(size_t(M) * K), b(size_t(K) * N);
    std::vector<CT> c(size_t(M) * N);
    // Values with many mantissa bits, so tf32 rounding and the FMA order matter.
    for (auto& x : a) x = ET(float((int(next_rand() % 20001) - 10000) / 1237.0));
    for (auto& x : b) x = ET(float((int(next_rand() % 20001) - 10000) / 731.0));
    for (auto& x : c) x = CT((int(next_rand() % 2001) - 1000) / 17.0);
    ET *da = to_device(a), *db = to_device(b);
    CT *dc = to_device(c), *dd;
    CHECK(cudaMalloc(&dd, c.size() * sizeof(CT)));
    gemm<TM, TN, TK, AT, ET, CT, LA, LB, TF32>
        <<<dim3(M / TM, N / TN), 32>>>(da, db, dc, dd, M, N, K, false, d_row);
    CHECK(cudaGetLastError());
    std::vector<CT> d = to_host(dd, c.size());
    int wrong = 0, exact = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            CT acc = c[size_t(i) * N + j];
            for (int k = 0; k < K; k++) {
                CT x = as_float(a[at(a_row, M, K, i, k)]), y = as_float(b[at(b_row, K, N, k, j)]);
                if (TF32) {
                    x = tf32_rna(x);
                    y = tf32_rna(y);
                }
                acc = std::fma(x, y, acc);
            }
            CT got = d[at(d_row, M, N, i, j)];
            if (memcmp(&got, &acc, sizeof(CT)) == 0) exact++;
            if (!(std::fabs(double(got) - double(acc)) <= tol * (1.0 + std::fabs(double(acc))))) {
                if (wrong < 3) printf("  %s: D[%d][%d] = %.17g, expected %.17g\n", name, i, j, double(got), double(acc));
                wrong++;
            }
        }
    printf("%s: %d x %d x %d, %d wrong, %d of %d exact\n", name, M, N, K, wrong, exact, M * N);
    failures += wrong != 0;
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dd);
}

// 8-bit integers: C near the s32 limits so that saturation (satf) shows.
template <int TM, int TN, int TK, typename ET, typename LA, typename LB>
void run_int8(const char* name, int M, int N, int K, bool satf, bool d_row) {
    constexpr bool a_row = std::is_same<LA, wmma::row_major>::value;
    constexpr bool b_row = std::is_same<LB, wmma::row_major>::value;
    constexpr bool is_signed = std::is_same<ET, signed char>::value;
    std::vector<ET> a(size_t(M) * K), b(size_t(K) * N);
    std::vector<int> c(size_t(M) * N);
    for (auto& x : a) x = ET(next_rand() & 0xff);
    for (auto& x : b) x = ET(next_rand() & 0xff);
    for (size_t i = 0; i < c.size(); i++) {
        int r = int(next_rand() % 60001);
        // A third within 60000 of INT_MAX, a third of INT_MIN (where the sums of K
        // products saturate with satf, or wrap), a third small.
        c[i] = i % 3 == 0 ? 2147483647 - r : i % 3 == 1 ? -2147483647 - 1 + r : r - 30000;
    }
    ET *da = to_device(a), *db = to_device(b);
    int *dc = to_device(c), *dd;
    CHECK(cudaMalloc(&dd, c.size() * sizeof(int)));
    gemm<TM, TN, TK, ET, ET, int, LA, LB, false>
        <<<dim3(M / TM, N / TN), 32>>>(da, db, dc, dd, M, N, K, satf, d_row);
    CHECK(cudaGetLastError());
    std::vector<int> d = to_host(dd, c.size());
    int wrong = 0, saturated = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            // Each wmma.mma adds TK products to the accumulator and saturates (satf) or
            // wraps its result.
            int64_t acc = c[size_t(i) * N + j];
            for (int k0 = 0; k0 < K; k0 += TK) {
                for (int k = k0; k < k0 + TK; k++)
                    acc += int64_t(a[at(a_row, M, K, i, k)]) * int64_t(b[at(b_row, K, N, k, j)]);
                if (satf && (acc > INT32_MAX || acc < INT32_MIN)) {
                    acc = acc > INT32_MAX ? INT32_MAX : INT32_MIN;
                    saturated++;
                }
                acc = int32_t(uint32_t(acc));
            }
            if (d[at(d_row, M, N, i, j)] != int(acc)) {
                if (wrong < 3) printf("  %s: D[%d][%d] = %d, expected %d\n", name, i, j, d[at(d_row, M, N, i, j)], int(acc));
                wrong++;
            }
        }
    printf("%s: %d x %d x %d (%s), %d wrong, %d saturations\n", name, M, N, K,
           is_signed ? "s8" : "u8", wrong, saturated);
    failures += wrong != 0 || (satf && saturated == 0);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dd);
}

// ---------------------------------------------------------------------------------------
// Sub-byte: A row-major, B column-major (the only layouts), K contiguous; `words` 32-bit
// words per row of A and per column of B.
template <typename AT, int TK>
__global__ void gemm_subbyte(const unsigned* a, const unsigned* b, const int* c, int* d, int M,
                             int N, int K, int op, bool d_row) {
    int tm = blockIdx.x, tn = blockIdx.y;
    int words = K * (std::is_same<AT, exp_prec::b1>::value ? 1 : 4) / 32;
    wmma::fragment<wmma::matrix_a, 8, 8, TK, AT, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, TK, AT, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, TK, int> fc;
    wmma::load_matrix_sync(fc, c + size_t(tm) * 8 * N + tn * 8, N, wmma::mem_row_major);
    int per_word = std::is_same<AT, exp_prec::b1>::value ? 32 : 8;
    for (int k = 0; k < K; k += TK) {
        wmma::load_matrix_sync(fa, a + size_t(tm) * 8 * words + k / per_word, K);
        wmma::load_matrix_sync(fb, b + size_t(tn) * 8 * words + k / per_word, K);
        if constexpr (std::is_same<AT, exp_prec::b1>::value) {
            if (op == 0)
                wmma::bmma_sync(fc, fa, fb, fc, wmma::experimental::bmmaBitOpXOR);
            else
                wmma::bmma_sync(fc, fa, fb, fc, wmma::experimental::bmmaBitOpAND);
        } else {
            wmma::mma_sync(fc, fa, fb, fc, op != 0);
        }
    }
    int* pd = d_row ? d + size_t(tm) * 8 * N + tn * 8 : d + size_t(tn) * 8 * M + tm * 8;
    wmma::store_matrix_sync(pd, fc, d_row ? N : M, d_row ? wmma::mem_row_major : wmma::mem_col_major);
}

// op: s4/u4: 0 plain, 1 satf; b1: 0 XOR, 1 AND.
template <typename AT, int TK>
void run_subbyte(const char* name, int M, int N, int K, int op, bool d_row) {
    constexpr bool b1 = std::is_same<AT, exp_prec::b1>::value;
    constexpr bool s4 = std::is_same<AT, exp_prec::s4>::value;
    int bits = b1 ? 1 : 4, words = K * bits / 32;
    std::vector<unsigned> a(size_t(M) * words), b(size_t(N) * words);
    for (auto& x : a) x = next_rand() ^ (next_rand() << 24);
    for (auto& x : b) x = next_rand() ^ (next_rand() << 24);
    std::vector<int> c(size_t(M) * N);
    for (size_t i = 0; i < c.size(); i++) {
        int r = int(next_rand() % 2001) - 1000;
        c[i] = !b1 && op == 1 && i % 2 == 0 ? (i % 4 == 0 ? 2147483647 - r - 500 : -2147483647 + r + 500) : r;
    }
    auto elem = [&](const std::vector<unsigned>& m, int row, int k) -> int64_t {
        unsigned w = m[size_t(row) * words + k * bits / 32];
        unsigned v = (w >> (k * bits % 32)) & ((1u << bits) - 1);
        if (s4 && v >= 8) return int64_t(v) - 16;
        return v;
    };
    unsigned *da = to_device(a), *db = to_device(b);
    int *dc = to_device(c), *dd;
    CHECK(cudaMalloc(&dd, c.size() * sizeof(int)));
    gemm_subbyte<AT, TK><<<dim3(M / 8, N / 8), 32>>>(da, db, dc, dd, M, N, K, op, d_row);
    CHECK(cudaGetLastError());
    std::vector<int> d = to_host(dd, c.size());
    int wrong = 0, saturated = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int64_t acc = c[size_t(i) * N + j];
            for (int k0 = 0; k0 < K; k0 += TK) {
                for (int k = k0; k < k0 + TK; k++) {
                    int64_t x = elem(a, i, k), y = elem(b, j, k);
                    acc += b1 ? (op == 0 ? (x ^ y) : (x & y)) : x * y;
                }
                if (!b1 && op == 1 && (acc > INT32_MAX || acc < INT32_MIN)) {
                    acc = acc > INT32_MAX ? INT32_MAX : INT32_MIN;
                    saturated++;
                }
                acc = int32_t(uint32_t(acc));
            }
            if (d[at(d_row, M, N, i, j)] != int(acc)) {
                if (wrong < 3) printf("  %s: D[%d][%d] = %d, expected %d\n", name, i, j, d[at(d_row, M, N, i, j)], int(acc));
                wrong++;
            }
        }
    printf("%s: %d x %d x %d, %d wrong, %d saturations\n", name, M, N, K, wrong, saturated);
    failures += wrong != 0 || (!b1 && op == 1 && saturated == 0);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dd);
}

int main() {
    using R = wmma::row_major;
    using C = wmma::col_major;
    // tf32 m16n16k8, every A/B layout, D row- and column-major.
    run_float<16, 16, 8, wmma::precision::tf32, float, float, R, R, true>("tf32 row.row", 32, 32, 32, 1e-5, true);
    run_float<16, 16, 8, wmma::precision::tf32, float, float, R, C, true>("tf32 row.col", 32, 32, 32, 1e-5, false);
    run_float<16, 16, 8, wmma::precision::tf32, float, float, C, R, true>("tf32 col.row", 32, 16, 16, 1e-5, true);
    run_float<16, 16, 8, wmma::precision::tf32, float, float, C, C, true>("tf32 col.col", 16, 32, 16, 1e-5, false);
    // double m8n8k4.
    run_float<8, 8, 4, double, double, double, R, R, false>("f64 row.row", 16, 16, 16, 1e-12, true);
    run_float<8, 8, 4, double, double, double, R, C, false>("f64 row.col", 16, 8, 8, 1e-12, false);
    run_float<8, 8, 4, double, double, double, C, R, false>("f64 col.row", 8, 16, 8, 1e-12, true);
    run_float<8, 8, 4, double, double, double, C, C, false>("f64 col.col", 16, 16, 12, 1e-12, false);
    // __half in the tall and wide shapes (A and B fragments of 16 halves, 4 distinct in an
    // m32n8k16 B or an m8n32k16 A).
    run_float<32, 8, 16, __half, __half, float, R, C, false>("f16 m32n8k16 row.col", 32, 16, 32, 1e-5, true);
    run_float<32, 8, 16, __half, __half, float, C, R, false>("f16 m32n8k16 col.row", 32, 8, 16, 1e-5, false);
    run_float<8, 32, 16, __half, __half, float, R, R, false>("f16 m8n32k16 row.row", 16, 32, 32, 1e-5, false);
    run_float<8, 32, 16, __half, __half, float, C, C, false>("f16 m8n32k16 col.col", 8, 32, 16, 1e-5, true);
    // 8-bit integers: the three shapes, both signs, saturation on and off.
    run_int8<16, 16, 16, signed char, R, C>("s8 m16n16k16 row.col", 32, 32, 32, false, true);
    run_int8<16, 16, 16, signed char, C, R>("s8 m16n16k16 col.row satf", 32, 32, 32, true, false);
    run_int8<16, 16, 16, unsigned char, R, R>("u8 m16n16k16 row.row satf", 16, 32, 32, true, true);
    run_int8<32, 8, 16, unsigned char, R, C>("u8 m32n8k16 row.col", 32, 16, 32, false, true);
    run_int8<32, 8, 16, signed char, C, C>("s8 m32n8k16 col.col satf", 32, 16, 32, true, false);
    run_int8<8, 32, 16, signed char, R, R>("s8 m8n32k16 row.row", 16, 32, 32, false, false);
    run_int8<8, 32, 16, unsigned char, C, C>("u8 m8n32k16 col.col satf", 16, 32, 32, true, true);
    // Sub-byte (nvcc 11.8's experimental precisions).
    run_subbyte<exp_prec::s4, 32>("s4 m8n8k32", 16, 16, 64, 0, true);
    run_subbyte<exp_prec::s4, 32>("s4 m8n8k32 satf", 16, 16, 64, 1, false);
    run_subbyte<exp_prec::u4, 32>("u4 m8n8k32", 16, 8, 96, 0, false);
    run_subbyte<exp_prec::u4, 32>("u4 m8n8k32 satf", 8, 16, 64, 1, true);
    run_subbyte<exp_prec::b1, 128>("b1 m8n8k128 xor", 16, 16, 256, 0, true);
    run_subbyte<exp_prec::b1, 128>("b1 m8n8k128 and", 16, 8, 384, 1, false);
    CHECK(cudaDeviceSynchronize());
    printf("%s\n", failures == 0 ? "PASS" : "FAIL");
    return failures != 0;
}
