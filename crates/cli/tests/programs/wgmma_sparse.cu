// Sparse warpgroup matrix products (sm_90a, clang-19, inline PTX): a 64 x 16 x 64 GEMM
// whose A is 2:4 structured sparse, through two wgmma.mma_async.sp.m64n16k32.f32.f16.f16
// (K = 64) with A's stored elements in registers (the dense m64nNk16 A fragment of the
// compressed 64 x 32), its metadata (sparsity selector 0: threads 0 and 1 of each group
// of four) and B from shared memory in the canonical K-major layout without swizzle.
// Index pairs of either order. The host checks every element against the dense product
// (small multiples of 1/4: exact) and prints PASS.
#include <cstdio>
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int M = 64, N = 16, K = 64, KC = K / 2, CH = K / 4;

__device__ uint32_t h2(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
}

__device__ unsigned long long desc(unsigned start, unsigned lbo, unsigned sbo) {
    auto enc = [](unsigned x) { return (unsigned long long)((x & 0x3FFFF) >> 4); };
    return enc(start) | enc(lbo) << 16 | enc(sbo) << 32;
}

// ac: compressed A (M x KC), nib: each row's chunk nibbles (M x CH), b: N x K (K-major).
__global__ void sparse_wgmma(const float* ac, const uint8_t* nib, const __half* b, float* out) {
    __shared__ __align__(128) unsigned char smem[N * K * 2];
    int tid = threadIdx.x, w = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    // Canonical K-major, no swizzle: 8x16-byte core matrices, K-adjacent ones 128 bytes
    // apart (LBO), 8-row groups (K/8)*128 apart (SBO).
    for (int i = tid; i < N * K; i += 128) {
        int n = i / K, k = i % K;
        unsigned off = (n / 8) * (K / 8) * 128 + (k / 8) * 128 + (n % 8) * 16 + (k % 8) * 2;
        *(__half*)(smem + off) = b[i];
    }
    __syncthreads();
    float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int s = 0; s < K / 32; s++) {
        int r0 = 16 * w + g;
        uint32_t a[4];
        for (int j = 0; j < 4; j++) {
            // Elements 2j, 2j+1: row g + 8(j%2), compressed column 2t + 8(j/2) (+1).
            int r = r0 + 8 * (j % 2), c = 16 * s + 2 * t + 8 * (j / 2);
            a[j] = h2(ac[r * KC + c], ac[r * KC + c + 1]);
        }
        // Selector 0: thread t = 0, 1 holds chunks 8s + 4t .. +3 of rows r0 and r0 + 8.
        uint32_t e = 0;
        if (t < 2)
            for (int i = 0; i < 4; i++) {
                e |= uint32_t(nib[r0 * CH + 8 * s + 4 * t + i]) << (4 * i);
                e |= uint32_t(nib[(r0 + 8) * CH + 8 * s + 4 * t + i]) << (16 + 4 * i);
            }
        unsigned long long bd = desc(base + s * 4 * 128, 128, (K / 8) * 128);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        if (s == 0)
            asm volatile(
                "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16 "
                "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, %13, 0, 0, 1, 1, 0;"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                  "+f"(d[6]), "+f"(d[7])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(bd), "r"(e));
        else
            asm volatile(
                "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16 "
                "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, %13, 0, 1, 1, 1, 0;"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                  "+f"(d[6]), "+f"(d[7])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(bd), "r"(e));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
    // D element e: row 16w + g + 8((e/2)%2), column 2t + e%2 + 8(e/4).
    for (int e = 0; e < 8; e++)
        out[(16 * w + g + 8 * ((e / 2) % 2)) * N + 2 * t + e % 2 + 8 * (e / 4)] = d[e];
}

int main() {
    static float ac[M * KC], dense[M * K], bf[N * K], out[M * N];
    static uint8_t nib[M * CH];
    static __half bh[N * K];
    uint32_t x = 77;
    auto next = [&] { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x; };
    for (int r = 0; r < M; r++)
        for (int q = 0; q < CH; q++) {
            int i0 = next() % 4, i1 = (i0 + 1 + next() % 3) % 4;
            nib[r * CH + q] = uint8_t(i0 | i1 << 2);
            int idx[2] = {i0, i1};
            for (int s = 0; s < 2; s++) {
                float v = float(int(next() % 15) - 7) * 0.5f;
                ac[r * KC + 2 * q + s] = v;
                dense[r * K + 4 * q + idx[s]] = v;
            }
        }
    for (int i = 0; i < N * K; i++) {
        bf[i] = float(int(next() % 15) - 7) * 0.5f;
        bh[i] = __float2half(bf[i]);
    }
    float *dac, *dout;
    uint8_t* dnib;
    __half* db;
    cudaMalloc(&dac, sizeof ac);
    cudaMalloc(&dnib, sizeof nib);
    cudaMalloc(&db, sizeof bh);
    cudaMalloc(&dout, sizeof out);
    cudaMemcpy(dac, ac, sizeof ac, cudaMemcpyHostToDevice);
    cudaMemcpy(dnib, nib, sizeof nib, cudaMemcpyHostToDevice);
    cudaMemcpy(db, bh, sizeof bh, cudaMemcpyHostToDevice);
    sparse_wgmma<<<1, 128>>>(dac, dnib, db, dout);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        printf("launch failed: %s\n", cudaGetErrorString(err));
        return 1;
    }
    cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int k = 0; k < K; k++) want += dense[i * K + k] * bf[j * K + k];
            if (out[i * N + j] != want && bad++ < 8)
                printf("D[%d][%d] = %g, want %g\n", i, j, out[i * N + j], want);
        }
    printf("sparse wgmma %d x %d x %d: %d wrong\n", M, N, K, bad);
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad != 0;
}
