// regsim's calibration microbenchmarks: one thread times a dependent chain with clock64,
// in the style of the published dissection studies (Jia et al. 2018, "Dissecting the
// NVIDIA Volta GPU Architecture via Microbenchmarking"; Huerta et al. MICRO'25).
//
// Each test prints one line `NAME CYCLES_PER_STEP STEPS`; `regsim calibrate` reads them and
// sets each beside the published figure for the simulated GPU. The last line is PASS (or
// FAIL: reason when a chase did not end where it should, i.e. the chain was wrong).
//
//   chase_l1     pointer chase over 32 lines (4 KB), second lap on: L1 hits
//   chase_l2     pointer chase over 8192 lines (1 MB), second lap: L1 misses, L2 hits
//   chase_dram   pointer chase over 512 lines 4 KB + 128 B apart never touched before
//                (cold in L1 and L2)
//   chase_shared index chase in shared memory (32-bit indices)
//   fp32_dep / int_dep / fp64_dep / sfu_dep   a dependent chain of fma.rn.f32 /
//                mad.lo.s32 / fma.rn.f64 / rsqrt.approx.f32
//   fp32_indep   eight independent fma.rn.f32 chains interleaved: cycles per instruction
//   empty        an empty kernel (its cycles come from the statistics, not from here)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    cudaGetErrorString(e_));                                          \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

// Chases `steps` pointers from `start` twice with the same code; times the second pass
// (data and instructions warm).
__global__ void chase(void **start, int steps, long long *cycles, void **end) {
    void **p = start;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {
        t0 = clock64();
        for (int i = 0; i < steps; i++) p = (void **)*p;
        t1 = clock64();
    }
    *cycles = t1 - t0;
    *end = (void *)p;
}

// Chases `steps` pointers once (cold lines).
__global__ void chase_cold(void **start, int steps, long long *cycles, void **end) {
    void **p = start;
    long long t0 = clock64();
    for (int i = 0; i < steps; i++) p = (void **)*p;
    long long t1 = clock64();
    *cycles = t1 - t0;
    *end = (void *)p;
}

// Each element holds the shared-space address of the next, so a step is one
// `ld.shared.u32` whose result is the next address (no address arithmetic in the chain).
__global__ void chase_shared(int steps, long long *cycles, int *end) {
    __shared__ unsigned next[1024];
    unsigned base = (unsigned)__cvta_generic_to_shared(next);
    for (int i = 0; i < 1024; i++) next[i] = base + 4 * ((i + 33) & 1023);
    unsigned a = base;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
        a = base;
        t0 = clock64();
#pragma unroll 8
        for (int i = 0; i < steps; i++) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
        t1 = clock64();
    }
    *cycles = t1 - t0;
    *end = (int)((a - base) / 4);
}

#define UNROLL 256

__global__ void fp32_dep(float a, float b, int iters, long long *cycles, float *out) {
    float x = a;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
    t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < UNROLL; k++) x = fmaf(x, a, b);
    }
    t1 = clock64();
    }
    *cycles = t1 - t0;
    *out = x;
}

__global__ void int_dep(int a, int b, int iters, long long *cycles, int *out) {
    int x = a;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
    t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < UNROLL; k++) x = x * a + b;
    }
    t1 = clock64();
    }
    *cycles = t1 - t0;
    *out = x;
}

__global__ void fp64_dep(double a, double b, int iters, long long *cycles, double *out) {
    double x = a;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
    t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < UNROLL; k++) x = fma(x, a, b);
    }
    t1 = clock64();
    }
    *cycles = t1 - t0;
    *out = x;
}

__global__ void sfu_dep(float a, int iters, long long *cycles, float *out) {
    float x = a;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
    t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < UNROLL; k++) x = rsqrtf(x);
    }
    t1 = clock64();
    }
    *cycles = t1 - t0;
    *out = x;
}

__global__ void fp32_indep(float a, float b, int iters, long long *cycles, float *out) {
    float x0 = a, x1 = a + 1, x2 = a + 2, x3 = a + 3, x4 = a + 4, x5 = a + 5, x6 = a + 6,
          x7 = a + 7;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
    t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < UNROLL / 8; k++) {
            x0 = fmaf(x0, a, b);
            x1 = fmaf(x1, a, b);
            x2 = fmaf(x2, a, b);
            x3 = fmaf(x3, a, b);
            x4 = fmaf(x4, a, b);
            x5 = fmaf(x5, a, b);
            x6 = fmaf(x6, a, b);
            x7 = fmaf(x7, a, b);
        }
    }
    t1 = clock64();
    }
    *cycles = t1 - t0;
    *out = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

__global__ void empty() {}

static void *dev_alloc(size_t bytes) {
    void *p = nullptr;
    CHECK(cudaMalloc(&p, bytes));
    return p;
}

static long long read_cycles(long long *d) {
    long long c = 0;
    CHECK(cudaMemcpy(&c, d, sizeof c, cudaMemcpyDeviceToHost));
    return c;
}

// A ring of `lines` pointers `stride` bytes apart in `buf`; returns false if the chase
// ended elsewhere than where it must.
static bool pointer_test(const char *name, size_t lines, size_t stride, bool cold,
                         long long *d_cycles, void **d_end) {
    size_t bytes = lines * stride;
    char *buf = (char *)dev_alloc(bytes);
    char *host = (char *)calloc(bytes, 1);
    for (size_t i = 0; i < lines; i++) {
        void *next = buf + ((i + 1) % lines) * stride;
        memcpy(host + i * stride, &next, sizeof next);
    }
    CHECK(cudaMemcpy(buf, host, bytes, cudaMemcpyHostToDevice));
    free(host);
    int steps = (int)lines;
    if (cold) {
        chase_cold<<<1, 1>>>((void **)buf, steps, d_cycles, d_end);
    } else {
        chase<<<1, 1>>>((void **)buf, steps, d_cycles, d_end);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    void *end = nullptr;
    CHECK(cudaMemcpy(&end, d_end, sizeof end, cudaMemcpyDeviceToHost));
    printf("%s %.2f %d\n", name, (double)read_cycles(d_cycles) / steps, steps);
    bool ok = end == (void *)buf;
    CHECK(cudaFree(buf));
    return ok;
}

static void alu_result(const char *name, long long *d_cycles, int steps) {
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("%s %.2f %d\n", name, (double)read_cycles(d_cycles) / steps, steps);
}

int main() {
    long long *d_cycles = (long long *)dev_alloc(sizeof(long long));
    void **d_end = (void **)dev_alloc(sizeof(void *));
    double *d_out = (double *)dev_alloc(sizeof(double));
    bool ok = true;
    // The cold chase first, before anything else touches the L2.
    ok &= pointer_test("chase_dram", 512, 4096 + 128, true, d_cycles, d_end);
    ok &= pointer_test("chase_l1", 32, 128, false, d_cycles, d_end);
    ok &= pointer_test("chase_l2", 8192, 128, false, d_cycles, d_end);

    const int steps = 1024;
    chase_shared<<<1, 1>>>(steps, d_cycles, (int *)d_out);
    alu_result("chase_shared", d_cycles, steps);
    int j = 0;
    CHECK(cudaMemcpy(&j, d_out, sizeof j, cudaMemcpyDeviceToHost));
    ok &= j == (steps * 33) % 1024;

    const int iters = 4;
    fp32_dep<<<1, 1>>>(0.999f, 0.001f, iters, d_cycles, (float *)d_out);
    alu_result("fp32_dep", d_cycles, iters * UNROLL);
    int_dep<<<1, 1>>>(3, 1, iters, d_cycles, (int *)d_out);
    alu_result("int_dep", d_cycles, iters * UNROLL);
    fp64_dep<<<1, 1>>>(0.999, 0.001, iters, d_cycles, d_out);
    alu_result("fp64_dep", d_cycles, iters * UNROLL);
    sfu_dep<<<1, 1>>>(2.0f, iters, d_cycles, (float *)d_out);
    alu_result("sfu_dep", d_cycles, iters * UNROLL);
    fp32_indep<<<1, 1>>>(0.999f, 0.001f, iters, d_cycles, (float *)d_out);
    alu_result("fp32_indep", d_cycles, iters * UNROLL);
    empty<<<1, 32>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf(ok ? "PASS\n" : "FAIL: a chase ended at the wrong element\n");
    return ok ? 0 : 1;
}
