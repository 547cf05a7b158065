// A 64 x 32 x 64 GEMM with Hopper's warpgroup matrix products (sm_90a): one warpgroup
// stages A (64 x 64) and B (stored 32 x 64, K-major) in shared memory in the canonical
// layouts of the PTX ISA ("Asynchronous Warpgroup Level Matrix Shared Memory Layout")
// with no swizzle and 32, 64 and 128-byte swizzles, builds the matrix descriptors and
// runs four wgmma.mma_async.m64n32k16.f32.f16.f16 (K = 64), with A from shared memory
// or (A_REGS) from registers, in one commit group, then waits for it. f16 inputs are
// small multiples of 1/4, so the float reference on the host is exact. Prints PASS.
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int M = 64, N = 32, K = 64;

// Byte offset of element (mn, k) of a K-major operand of `rows` rows (PTX ISA canonical
// layouts, K-major): no swizzle: 8x16-byte core matrices, K-adjacent ones 128 bytes
// apart (LBO), 8-row groups (K/8)*128 apart (SBO); swizzled (W bytes): K-atoms of W bytes
// per row, rows W bytes apart, the atoms of the whole K one after another.
__device__ unsigned layout(int sw, int rows, int mn, int k) {
    if (sw == 0) return (mn / 8) * (K / 8) * 128 + (k / 8) * 128 + (mn % 8) * 16 + (k % 8) * 2;
    int atom = k * 2 / sw, c = (k * 2) % sw;
    return atom * rows * sw + mn * sw + c;
}

// Swizzle<b,4,3> on the shared-memory address: bits [4,4+b) ^= bits [7,7+b).
__device__ unsigned swizzle(int sw, unsigned addr) {
    int b = sw == 128 ? 3 : sw == 64 ? 2 : sw == 32 ? 1 : 0;
    return addr ^ (((addr >> 7) & ((1u << b) - 1)) << 4);
}

__device__ unsigned long long desc(unsigned start, unsigned lbo, unsigned sbo, int sw) {
    unsigned long long mode = sw == 128 ? 1 : sw == 64 ? 2 : sw == 32 ? 3 : 0;
    auto enc = [](unsigned x) { return (unsigned long long)((x & 0x3FFFF) >> 4); };
    return enc(start) | enc(lbo) << 16 | enc(sbo) << 32 | mode << 62;
}

// Descriptor of k-slice s (16 elements, 32 bytes) of an operand at `base`.
__device__ unsigned long long slice_desc(unsigned base, int sw, int rows, int s) {
    if (sw == 0) return desc(base + s * 256, 128, (K / 8) * 128, 0);
    return desc(base + (32 * s / sw) * rows * sw + (32 * s) % sw, 16, 8 * sw, sw);
}

template <int SW, bool A_REGS>
__global__ void wgmma_gemm(const __half* a, const __half* b, float* out) {
    // Dynamic shared memory, its start rounded up to 1024 bytes (the 128-byte swizzle's
    // pattern then starts at row 0).
    extern __shared__ unsigned char dyn[];
    unsigned raw = (unsigned)__cvta_generic_to_shared(dyn);
    unsigned base = (raw + 1023) & ~1023u;
    unsigned char* smem = dyn + (base - raw);
    int tid = threadIdx.x;
    unsigned a_base = base, b_base = base + M * K * 2;
    for (int i = tid; i < M * K; i += 128) {
        int m = i / K, k = i % K;
        unsigned at = swizzle(SW, a_base + layout(SW, M, m, k));
        *(__half*)(smem + (at - base)) = a[i];
    }
    for (int i = tid; i < N * K; i += 128) {  // b is N x K (B column-major)
        int n = i / K, k = i % K;
        unsigned at = swizzle(SW, b_base + layout(SW, N, n, k));
        *(__half*)(smem + (at - base)) = b[i];
    }
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    float d[16];
    for (int i = 0; i < 16; ++i) d[i] = 0.0f;
    int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int s = 0; s < K / 16; ++s) {
        unsigned long long db = slice_desc(b_base, SW, N, s);
        int scale_d = s > 0;
        if (A_REGS) {
            // The warp's A fragment (mma.m16n8k16's A over rows 16*warp..+16).
            unsigned ar[4];
            for (int r = 0; r < 4; ++r) {
                int row = 16 * warp + g + 8 * (r % 2), col = 16 * s + 2 * t + 8 * (r / 2);
                __half2 h = __halves2half2(a[row * K + col], a[row * K + col + 1]);
                ar[r] = *(unsigned*)&h;
            }
            asm volatile(
                "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
                "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "l"(db), "r"(scale_d));
        } else {
            unsigned long long da = slice_desc(a_base, SW, M, s);
            asm volatile(
                "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
                "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, 0, 0;\n}\n"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                : "l"(da), "l"(db), "r"(scale_d));
        }
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int e = 0; e < 16; ++e) {
        int row = 16 * warp + g + 8 * ((e / 2) % 2), col = 2 * t + e % 2 + 8 * (e / 4);
        out[row * N + col] = d[e];
    }
}

template <int SW, bool A_REGS>
int run(const __half* da, const __half* db, float* dd, const float* ha, const float* hb) {
    cudaMemset(dd, 0, M * N * sizeof(float));
    wgmma_gemm<SW, A_REGS><<<1, 128, M * K * 2 + N * K * 2 + 1024>>>(da, db, dd);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        printf("swizzle %d%s: FAILED: %s\n", SW, A_REGS ? " (A in registers)" : "",
               cudaGetErrorString(err));
        return 1;
    }
    float hd[M * N];
    cudaMemcpy(hd, dd, sizeof hd, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += ha[m * K + k] * hb[n * K + k];
            if (hd[m * N + n] != acc && bad++ < 5)
                printf("swizzle %d: D[%d][%d] = %g, expected %g\n", SW, m, n, hd[m * N + n], acc);
        }
    return bad != 0;
}

int main() {
    static float ha[M * K], hb[N * K];
    static __half a16[M * K], b16[N * K];
    for (int i = 0; i < M * K; ++i) {
        ha[i] = (float)((i * 7 + i / K) % 9 - 4) * 0.25f;
        a16[i] = __float2half(ha[i]);
    }
    for (int i = 0; i < N * K; ++i) {
        hb[i] = (float)((i * 5 + i / K * 3) % 7 - 3) * 0.5f;
        b16[i] = __float2half(hb[i]);
    }
    __half *da, *db;
    float* dd;
    cudaMalloc(&da, sizeof a16);
    cudaMalloc(&db, sizeof b16);
    cudaMalloc(&dd, M * N * sizeof(float));
    cudaMemcpy(da, a16, sizeof a16, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b16, sizeof b16, cudaMemcpyHostToDevice);
    int failed = run<0, false>(da, db, dd, ha, hb) + run<32, false>(da, db, dd, ha, hb) +
                 run<64, false>(da, db, dd, ha, hb) + run<128, false>(da, db, dd, ha, hb) +
                 run<128, true>(da, db, dd, ha, hb);
    if (failed) {
        printf("FAILED\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
