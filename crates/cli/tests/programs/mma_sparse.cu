// Sparse tensor-core products (nvcc 11.8, sm_80, inline PTX mma.sp): 32 x 16 tiles of
// D = A x B with a structured-sparse A of K = 64, through mma.sp m16n8k32 f16 (sparsity
// selector 1), m16n8k16 f16 (selector 2), m16n8k64 s8 (selector 0) and m16n8k8 tf32
// (1:2, selector 3). Each thread gathers its compressed A, B and metadata from global
// memory with the PTX ISA's formulas ("Sparse matrix storage", "Matrix fragments for
// multiply-accumulate operation with sparse matrix A"); threads the selector does not pick
// pass metadata 0, which the hardware ignores. The host checks every element against a
// CPU product of the dense A and prints PASS. (nvcc 11.8's PTX ISA 7.8 has no
// ::ordered_metadata; the 2:4 patterns here include decreasing index pairs, which plain
// mma.sp allows.)
#include <cstdio>
#include <cstdint>
#include <cuda_fp16.h>

constexpr int M = 32, N = 16, K = 64, KC = K / 2;

// Host-built inputs: compressed A (row-major M x KC), the metadata nibble of each row's
// chunk, dense B (row-major K x N).
struct Inputs {
    float af[M * KC];           // f16-valued (2:4 over 4-wide chunks)
    uint8_t nf[M * (K / 4)];
    int8_t as[M * KC];          // s8 (2:4)
    uint8_t ns[M * (K / 4)];
    float at[M * KC];           // tf32-valued (1:2 over 2-wide chunks)
    uint8_t nt[M * (K / 2)];
    float bf[K * N];
    int8_t bs[K * N];
    float bt[K * N];
};

__device__ uint32_t h2(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
}

__device__ uint32_t s8x4(const int8_t* p) {
    return uint32_t(uint8_t(p[0])) | uint32_t(uint8_t(p[1])) << 8 |
           uint32_t(uint8_t(p[2])) << 16 | uint32_t(uint8_t(p[3])) << 24;
}

// Metadata of thread j of the selected set: nibbles c0..c0+3 of rows g (bits 0-15) and
// g + 8 (bits 16-31).
__device__ uint32_t meta(const uint8_t* nib, int chunks, int r, int c0) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        v |= uint32_t(nib[r * chunks + c0 + i]) << (4 * i);
        v |= uint32_t(nib[(r + 8) * chunks + c0 + i]) << (16 + 4 * i);
    }
    return v;
}

__global__ void sparse_gemm(const Inputs* in, float* df32, float* df16, int32_t* ds8, float* dt) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    int m0 = 16 * (warp / 2), n0 = 8 * (warp % 2);
    // m16n8k32 f16, selector 1: threads 2 and 3 of each group hold K-halves 0 and 1.
    {
        float acc[4] = {0, 0, 0, 0};
        for (int ks = 0; ks < K; ks += 32) {
            int kc = ks / 2;
            uint32_t a[4], b[4];
            for (int j = 0; j < 4; j++) {
                // a_i: row g + 8((i/2)%2), compressed column 2t + i%2 + 8(i/4).
                int i = 2 * j, r = m0 + g + 8 * ((i / 2) % 2), c = kc + 2 * t + 8 * (i / 4);
                a[j] = h2(in->af[r * KC + c], in->af[r * KC + c + 1]);
                // b_i: row 2t + i%2 + 8(i/2), column g.
                int k = ks + 2 * t + 8 * j;
                b[j] = h2(in->bf[k * N + n0 + g], in->bf[(k + 1) * N + n0 + g]);
            }
            uint32_t e = t >= 2 ? meta(in->nf, K / 4, m0 + g, ks / 4 + 4 * (t - 2)) : 0;
            asm volatile(
                "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 "
                "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 1;"
                : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                  "r"(b[2]), "r"(b[3]), "r"(e));
        }
        for (int i = 0; i < 4; i++) df32[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + i % 2] = acc[i];
    }
    // m16n8k16 f16 (f16 D), selector 2: thread 2 of each group holds the whole K of 16.
    {
        uint32_t acc[2] = {0, 0};
        for (int ks = 0; ks < K; ks += 16) {
            int kc = ks / 2;
            uint32_t a[2], b[2];
            for (int j = 0; j < 2; j++) {
                int r = m0 + g + 8 * j, c = kc + 2 * t;  // a_i: row g + 8(i/2), column 2t + i%2
                a[j] = h2(in->af[r * KC + c], in->af[r * KC + c + 1]);
                int k = ks + 2 * t + 8 * j;
                b[j] = h2(in->bf[k * N + n0 + g], in->bf[(k + 1) * N + n0 + g]);
            }
            uint32_t e = t == 2 ? meta(in->nf, K / 4, m0 + g, ks / 4) : 0;
            asm volatile(
                "mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
                "{%0,%1}, {%2,%3}, {%4,%5}, {%0,%1}, %6, 2;"
                : "+r"(acc[0]), "+r"(acc[1])
                : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(e));
        }
        for (int i = 0; i < 4; i++) {
            __half2 h = *reinterpret_cast<__half2*>(&acc[i / 2]);
            df16[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + i % 2] =
                __half2float(i % 2 ? __high2half(h) : __low2half(h));
        }
    }
    // m16n8k64 s8, selector 0: all four threads, thread t chunks 4t..4t+3.
    {
        int32_t acc[4] = {0, 0, 0, 0};
        uint32_t a[4], b[4];
        for (int j = 0; j < 4; j++) {
            // a_e: row g + 8((e/4)%2), compressed column 4t + e%4 + 16(e/8); register j
            // holds e = 4j..4j+3.
            int r = m0 + g + 8 * (j % 2), c = 4 * t + 16 * (j / 2);
            a[j] = s8x4(&in->as[r * KC + c]);
            // b_e: row 4t + e%4 + 16(e/4), column g.
            int8_t col[4];
            for (int x = 0; x < 4; x++) col[x] = in->bs[(4 * t + x + 16 * j) * N + n0 + g];
            b[j] = s8x4(col);
        }
        uint32_t e = meta(in->ns, K / 4, m0 + g, 4 * t);
        asm volatile(
            "mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0;"
            : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]),
              "r"(b[3]), "r"(e));
        for (int i = 0; i < 4; i++) ds8[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + i % 2] = acc[i];
    }
    // m16n8k8 tf32 (1:2), selector 3: thread 3 of each group.
    {
        float acc[4] = {0, 0, 0, 0};
        for (int ks = 0; ks < K; ks += 8) {
            int kc = ks / 2;
            // a_i: row g + 8i, compressed column t; b_i: row t + 4i, column g.
            uint32_t a0 = __float_as_uint(in->at[(m0 + g) * KC + kc + t]);
            uint32_t a1 = __float_as_uint(in->at[(m0 + g + 8) * KC + kc + t]);
            uint32_t b0 = __float_as_uint(in->bt[(ks + t) * N + n0 + g]);
            uint32_t b1 = __float_as_uint(in->bt[(ks + t + 4) * N + n0 + g]);
            uint32_t e = t == 3 ? meta(in->nt, K / 2, m0 + g, ks / 2) : 0;
            asm volatile(
                "mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                "{%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%0,%1,%2,%3}, %8, 3;"
                : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(e));
        }
        for (int i = 0; i < 4; i++) dt[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + i % 2] = acc[i];
    }
}

int main() {
    static Inputs h;
    static float af_dense[M * K], at_dense[M * K];
    static int as_dense[M * K];
    uint32_t x = 2024;
    auto next = [&] { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x; };
    auto small = [&] { return float(int(next() % 15) - 7) * 0.5f; };
    for (int r = 0; r < M; r++) {
        for (int q = 0; q < K / 4; q++) {
            // Two distinct indices in either order (f16) or increasing (s8).
            int i0 = next() % 4, i1 = (i0 + 1 + next() % 3) % 4;
            h.nf[r * (K / 4) + q] = uint8_t(i0 | i1 << 2);
            int idx[2] = {i0, i1};
            for (int s = 0; s < 2; s++) {
                float v = small();
                h.af[r * KC + 2 * q + s] = v;
                af_dense[r * K + 4 * q + idx[s]] = v;
            }
            int j0 = next() % 3, j1 = j0 + 1 + next() % (3 - j0);
            h.ns[r * (K / 4) + q] = uint8_t(j0 | j1 << 2);
            int jdx[2] = {j0, j1};
            for (int s = 0; s < 2; s++) {
                int v = int(next() % 255) - 127;
                h.as[r * KC + 2 * q + s] = int8_t(v);
                as_dense[r * K + 4 * q + jdx[s]] = v;
            }
        }
        for (int q = 0; q < K / 2; q++) {
            int second = next() % 2;
            h.nt[r * (K / 2) + q] = second ? 0xE : 0x4;
            float v = small() * 0.5f;
            h.at[r * KC + q] = v;
            at_dense[r * K + 2 * q + second] = v;
        }
    }
    for (int i = 0; i < K * N; i++) {
        h.bf[i] = small();
        h.bs[i] = int8_t(int(next() % 255) - 127);
        h.bt[i] = small() * 0.25f;
    }
    Inputs* din;
    float *d1, *d2, *d4;
    int32_t* d3;
    cudaMalloc(&din, sizeof h);
    cudaMalloc(&d1, M * N * sizeof(float));
    cudaMalloc(&d2, M * N * sizeof(float));
    cudaMalloc(&d3, M * N * sizeof(int32_t));
    cudaMalloc(&d4, M * N * sizeof(float));
    cudaMemcpy(din, &h, sizeof h, cudaMemcpyHostToDevice);
    sparse_gemm<<<1, 128>>>(din, d1, d2, d3, d4);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        printf("launch failed: %s\n", cudaGetErrorString(err));
        return 1;
    }
    static float r1[M * N], r2[M * N], r4[M * N];
    static int32_t r3[M * N];
    cudaMemcpy(r1, d1, sizeof r1, cudaMemcpyDeviceToHost);
    cudaMemcpy(r2, d2, sizeof r2, cudaMemcpyDeviceToHost);
    cudaMemcpy(r3, d3, sizeof r3, cudaMemcpyDeviceToHost);
    cudaMemcpy(r4, d4, sizeof r4, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            // Every product and partial sum is a small multiple of 1/64: exact in f32 and
            // in f16, so any summation order gives these values.
            float wf = 0, wt = 0;
            int ws = 0;
            for (int k = 0; k < K; k++) {
                wf += af_dense[i * K + k] * h.bf[k * N + j];
                ws += as_dense[i * K + k] * h.bs[k * N + j];
                wt += at_dense[i * K + k] * h.bt[k * N + j];
            }
            float got[4] = {r1[i * N + j], r2[i * N + j], float(r3[i * N + j]), r4[i * N + j]};
            float want[4] = {wf, wf, float(ws), wt};
            for (int v = 0; v < 4; v++)
                if (got[v] != want[v] && bad++ < 8)
                    printf("product %d: D[%d][%d] = %g, want %g\n", v, i, j, got[v], want[v]);
        }
    printf("sparse gemm %d x %d x %d (f16 k32/k16, s8 k64, tf32 k8): %d wrong\n", M, N, K, bad);
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad != 0;
}
