// Device features ordinary CUDA C++ uses, checked against host references: integer
// intrinsics, 64-bit division, recursion, calls through device function pointers, float and
// double math library functions, half precision, __syncthreads_count/or/and, dynamic
// shared memory, shared and double atomics, cooperative-groups tiles, __match_any_sync,
// float shuffles, device malloc/free, 3D grids with __ldg, and a failing assert.
// Prints one line per failed check and `PASS` or `FAIL` at the end.
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cassert>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

static int fails = 0;
#define EXPECT(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); ++fails; } } while (0)

__device__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
__device__ int add1(int x) { return x + 1; }
__device__ int dbl(int x) { return 2 * x; }
typedef int (*fn_t)(int);
__device__ fn_t table[2] = {add1, dbl};

__global__ void k_int(uint32_t* o, uint64_t* o64, int64_t a, int64_t b) {
    uint32_t x = 0x12345678u + threadIdx.x;
    o[0] = __brev(x);
    o[1] = __ffs(x << 4);
    o[2] = __byte_perm(x, 0xaabbccdd, 0x5140);
    o[3] = __funnelshift_l(x, 0xdeadbeef, 12);
    o[4] = __umulhi(x, 0x9e3779b9u);
    o[5] = __dp4a((int)x, 0x01020304, 7);
    o[6] = __popcll(0xff00ff00ff00ff00ull);
    o[7] = __clzll(1ull << 40);
    o[8] = fact(6);
    o[9] = table[threadIdx.x & 1](20);
    o64[0] = a / b;
    o64[1] = a % b;
    o64[2] = (uint64_t)a / (uint64_t)b;
    o64[3] = __umul64hi((uint64_t)a, 0x9e3779b97f4a7c15ull);
}

__global__ void k_float(float* o, double* od, __half* oh) {
    float x = 0.7f + threadIdx.x;
    o[0] = __fdividef(1.0f, x);
    o[1] = __sinf(x);
    o[2] = erff(x);
    o[3] = lgammaf(x);
    o[4] = powf(x, 2.5f);
    o[5] = fmodf(7.5f, x);
    o[6] = cbrtf(x);
    o[7] = atan2f(x, 3.0f);
    od[0] = pow(1.1, 20.3);
    od[1] = erf(0.3);
    od[2] = sqrt(2.0);
    od[3] = tanh(0.5);
    __half h = __float2half(1.5f);
    oh[0] = __hadd(h, __float2half(0.25f));
    oh[1] = __hmul(h, h);
    oh[2] = hsqrt(h);
}

__global__ void k_sync(int* o, float* fs, double* ds) {
    extern __shared__ float dyn[];
    __shared__ float sum;
    if (threadIdx.x == 0) sum = 0;
    dyn[threadIdx.x] = threadIdx.x;
    __syncthreads();
    int c = __syncthreads_count(threadIdx.x % 3 == 0);
    int any = __syncthreads_or(threadIdx.x == 77);
    int all = __syncthreads_and(threadIdx.x < 1000);
    atomicAdd(&sum, dyn[blockDim.x - 1 - threadIdx.x]);
    atomicAdd(ds, 0.5);
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    int v = tile.thread_rank();
    for (int off = 8; off > 0; off /= 2) v += tile.shfl_down(v, off);
    block.sync();
    if (threadIdx.x == 0) { o[0] = c; o[1] = any; o[2] = all; o[3] = v; *fs = sum; }
    unsigned m = __match_any_sync(0xffffffff, threadIdx.x / 4);
    if (threadIdx.x == 5) o[4] = m;
    float f = __shfl_xor_sync(0xffffffff, (float)threadIdx.x, 3);
    if (threadIdx.x == 5) o[5] = (int)f;
    int* p = (int*)malloc(16);
    p[0] = threadIdx.x; p[3] = 3;
    if (threadIdx.x == 9) o[6] = p[0] + p[3];
    free(p);
}

__global__ void k_3d(int* o) {
    int id = ((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * blockDim.x * blockDim.y * blockDim.z
           + (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    o[id] = __ldg(&o[id]) + id;
}

__global__ void k_assert(int x) { assert(x < 5); }

int main() {
    uint32_t* o; uint64_t* o64; float* of; double* od; __half* oh; int* oi; float* fs; double* ds;
    cudaMallocManaged(&o, 64 * 4); cudaMallocManaged(&o64, 64 * 8); cudaMallocManaged(&of, 64 * 4);
    cudaMallocManaged(&od, 64 * 8); cudaMallocManaged(&oh, 64 * 2); cudaMallocManaged(&oi, 4096 * 4);
    cudaMallocManaged(&fs, 4); cudaMallocManaged(&ds, 8);
    *ds = 0;
    k_int<<<1, 1>>>(o, o64, -1234567890123ll, 987654ll);
    k_float<<<1, 1>>>(of, od, oh);
    k_sync<<<1, 128, 128 * sizeof(float)>>>(oi, fs, ds);
    cudaDeviceSynchronize();
    uint32_t x = 0x12345678u;
    uint32_t r = 0; for (int i = 0; i < 32; ++i) if (x >> i & 1) r |= 1u << (31 - i);
    EXPECT(o[0] == r);
    EXPECT(o[1] == (uint32_t)__builtin_ffs(x << 4));
    EXPECT(o[3] == (uint32_t)(((uint64_t)0xdeadbeef << 32 | x) << 12 >> 32));
    EXPECT(o[4] == (uint32_t)(((uint64_t)x * 0x9e3779b9u) >> 32));
    EXPECT((int)o[5] == 0x12 * 1 + 0x34 * 2 + 0x56 * 3 + 0x78 * 4 + 7);
    EXPECT(o[6] == 32 && o[7] == 23 && o[8] == 720 && o[9] == 21);
    EXPECT((int64_t)o64[0] == -1234567890123ll / 987654ll);
    EXPECT((int64_t)o64[1] == -1234567890123ll % 987654ll);
    EXPECT(o64[2] == (uint64_t)-1234567890123ll / 987654ull);
    EXPECT(o64[3] == (uint64_t)(((unsigned __int128)(uint64_t)-1234567890123ll * 0x9e3779b97f4a7c15ull) >> 64));
    EXPECT(o[2] == 0xcc56dd78u);
    // Library functions within a few ulps of the host's (CUDA documents 1-4 ulp bounds;
    // __fdividef and __sinf are approximate intrinsics with absolute bounds).
    const double xf = 0.7f;
    const double want_f[8] = {1 / xf, sin(xf), erf(xf), lgamma(xf), pow(xf, 2.5),
                              fmod(7.5, xf), cbrt(xf), atan2(xf, 3.0)};
    for (int i = 0; i < 8; ++i) {
        double tol = (i == 1) ? 1e-6 : 4 * fabs(want_f[i]) * 1.2e-7;
        if (fabs(of[i] - want_f[i]) > tol) {
            printf("FAIL float function %d: %.9g, want %.9g\n", i, of[i], want_f[i]);
            ++fails;
        }
    }
    const double want_d[4] = {pow(1.1, 20.3), erf(0.3), sqrt(2.0), tanh(0.5)};
    for (int i = 0; i < 4; ++i) {
        if (fabs(od[i] - want_d[i]) > 2 * fabs(want_d[i]) * 2.3e-16) {
            printf("FAIL double function %d: %.17g, want %.17g\n", i, od[i], want_d[i]);
            ++fails;
        }
    }
    EXPECT(__half2float(oh[0]) == 1.75f && __half2float(oh[1]) == 2.25f);
    EXPECT(fabsf(__half2float(oh[2]) - sqrtf(1.5f)) < 1e-3f);
    EXPECT(oi[0] == 43 && oi[1] == 1 && oi[2] == 1 && oi[3] == 120);
    EXPECT(oi[4] == 0xf0u && oi[5] == 6 && oi[6] == 12);
    EXPECT(*fs == 128 * 127 / 2 && *ds == 64.0);
    for (int i = 0; i < 2 * 3 * 4 * 4 * 2 * 2; ++i) oi[i] = 1;
    k_3d<<<dim3(2, 3, 4), dim3(4, 2, 2)>>>(oi);
    cudaDeviceSynchronize();
    for (int i = 0; i < 2 * 3 * 4 * 4 * 2 * 2; ++i) if (oi[i] != i + 1) { printf("FAIL 3d %d %d\n", i, oi[i]); ++fails; break; }
    k_assert<<<1, 8>>>(7);
    EXPECT(cudaDeviceSynchronize() == cudaErrorAssert);
    printf(fails ? "FAIL\n" : "PASS\n");
    return fails != 0;
}
