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
//   chase_dram   pointer chase over 512 lines 4 KB + 128 B apart, not touched by the
//                device before and evicted from the L2 by a host copy of twice its size
//                (cold in L1 and L2)
//   chase_shared index chase in shared memory (32-bit indices)
//   fp32_dep / int_dep / fp64_dep / sfu_dep   a dependent chain of fma.rn.f32 /
//                mad.lo.s32 / fma.rn.f64 / rsqrt.approx.f32
//   fp32_indep   eight independent fma.rn.f32 chains interleaved (in PTX, the order
//                ptxas would give them): cycles per instruction
//   ldg32 / ldg64 / ldg128   ld.global of 32, 64, 128 bits per thread (address in a regular
//                register, L1 hits) each overwriting the previous load's destination:
//                MICRO'25 Table 2's RAW/WAW latency, issue to the next issue
//   lds32 / lds64 / lds128   the same for ld.shared
//   ldc32        ld.const with the address in a register; ldc32_imm with an immediate
//                address (a constant-space symbol)
//   ldgsts32 / ldgsts64 / ldgsts128   cp.async of 4, 8, 16 bytes (global L1 hit to shared)
//                each followed by cp.async.wait_all: issue to the next copy's issue
//   ffma_pair_odd_odd / ffma_pair_even_odd / ffma_pair_even_even   MICRO'25 Listing 1:
//                clock, an instruction reading no register, FFMA with three even sources,
//                FFMA with one even source and two of the named parities, an instruction
//                reading no register, clock: the cycles between the two clock reads
//   ffma_bank3   independent FFMAs, each with three different sources in one bank (and no
//                source repeated by the next instruction, so no register-file cache hit):
//                cycles per FFMA
//   mma_dep      a dependent chain of mma.sync m16n8k16 f16 -> f32 in one warp (sm_80 on
//                silicon): issue to dependent issue
//   wmma_dep     the same with wmma.mma.sync m16n16k16 f32 (Volta's, sm_70)
//   atom_global_dep / atom_shared_dep   a dependent chain of atom.add.u32 on one global
//                (L1/L2-resident) or shared address in one thread: issue to dependent issue
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

// Reads the clock after an instruction that reads `p`: in-order issue then starts the
// timer only once the load that wrote `p` has returned (a bare clock64 may issue while
// the previous pass's last load is in flight, timing the tail of that load as well).
__device__ __forceinline__ long long clock_after(void **p) {
    long long t;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.eq.u64 q, %1, 0;\n\tmov.u64 %0, %%clock64;\n\t}"
                 : "=l"(t)
                 : "l"(p));
    return t;
}

// Chases `steps` pointers from `start` twice with the same code; times the second pass
// (data and instructions warm), from the return of the first pass's last load.
__global__ void chase(void **start, int steps, long long *cycles, void **end) {
    void **p = start;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {
        t0 = clock_after(p);
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
#define REP4(s) s s s s
#define REP32(s) REP4(REP4(s)) REP4(REP4(s))

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

// Eight chains interleaved in the order ptxas schedules them (x0..x7, x0..x7, ...), written
// as PTX so that nvcc's own order (the first two steps of each chain back to back, a stall
// each) does not count; `a` and `b` pass through `mov`s so that nvcc cannot re-load them
// from the parameter space inside the loop.
#define FMA8                                                                           \
    "fma.rn.f32 %0, %0, %8, %9;\n\tfma.rn.f32 %1, %1, %8, %9;\n\t"                      \
    "fma.rn.f32 %2, %2, %8, %9;\n\tfma.rn.f32 %3, %3, %8, %9;\n\t"                      \
    "fma.rn.f32 %4, %4, %8, %9;\n\tfma.rn.f32 %5, %5, %8, %9;\n\t"                      \
    "fma.rn.f32 %6, %6, %8, %9;\n\tfma.rn.f32 %7, %7, %8, %9;\n\t"
__global__ void fp32_indep(float a0, float b0, int iters, long long *cycles, float *out) {
    float a, b;
    asm volatile("mov.f32 %0, %1;" : "=f"(a) : "f"(a0));
    asm volatile("mov.f32 %0, %1;" : "=f"(b) : "f"(b0));
    float x0 = a, x1 = a + 1, x2 = a + 2, x3 = a + 3, x4 = a + 4, x5 = a + 5, x6 = a + 6,
          x7 = a + 7;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
        t0 = clock64();
#pragma unroll 1
        for (int i = 0; i < iters; i++) {
            // UNROLL (256) FFMAs: 32 rounds of the eight chains.
            asm volatile(REP32(FMA8)
                         : "+f"(x0), "+f"(x1), "+f"(x2), "+f"(x3), "+f"(x4), "+f"(x5),
                           "+f"(x6), "+f"(x7)
                         : "f"(a), "f"(b));
        }
        t1 = clock64();
    }
    *cycles = t1 - t0;
    *out = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}


// ---- MICRO'25 Table 2: memory-instruction latencies ----------------------------------
// Each step of a chain is one load whose destination is the previous load's destination:
// a WAW dependence, which MICRO'25 (section 5.4, Table 2) times together with RAW ("the
// earliest time that a consumer or an instruction that overwrites the same destination
// register can issue"). No address arithmetic is in the chain, so every width is timed
// the same way. 32 steps per loop iteration; the loop's own instructions overlap them.
#define LDSTEPS 32

// Times `iters` iterations of STEP twice (pass 0 warms the caches), keeping the second.
#define TIMED(STEP)                                                                    \
    do {                                                                               \
        _Pragma("unroll 1") for (int pass = 0; pass < 2; pass++) {                     \
            t0 = clock64();                                                            \
            _Pragma("unroll 1") for (int i = 0; i < iters; i++) { STEP; }              \
            t1 = clock64();                                                            \
        }                                                                              \
    } while (0)

#define LD1(OP, ADDR) asm volatile(REP32(OP " %0, [%1];\n\t") : "+r"(x) : ADDR)
#define LD2(OP, ADDR) asm volatile(REP32(OP " {%0, %1}, [%2];\n\t") : "+r"(x), "+r"(y) : ADDR)
#define LD4(OP, ADDR)                                                                  \
    asm volatile(REP32(OP " {%0, %1, %2, %3}, [%4];\n\t")                              \
                 : "+r"(x), "+r"(y), "+r"(z), "+r"(w) : ADDR)

// which: 0, 1, 2 = 32, 64, 128 bits per thread; `g` is an L1 hit after pass 0.
__global__ void ldg(const unsigned *g, int which, int iters, long long *cycles, unsigned *out) {
    unsigned x = 0, y = 0, z = 0, w = 0;
    long long t0 = 0, t1 = 0;
    if (which == 0) TIMED(LD1("ld.global.u32", "l"(g)));
    if (which == 1) TIMED(LD2("ld.global.v2.u32", "l"(g)));
    if (which == 2) TIMED(LD4("ld.global.v4.u32", "l"(g)));
    *cycles = t1 - t0;
    *out = x + y + z + w;
}

__global__ void lds(int which, int iters, long long *cycles, unsigned *out) {
    __shared__ __align__(16) unsigned buf[4];
    if (threadIdx.x < 4) buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    unsigned a = (unsigned)__cvta_generic_to_shared(buf);
    unsigned x = 0, y = 0, z = 0, w = 0;
    long long t0 = 0, t1 = 0;
    if (which == 0) TIMED(LD1("ld.shared.u32", "r"(a)));
    if (which == 1) TIMED(LD2("ld.shared.v2.u32", "r"(a)));
    if (which == 2) TIMED(LD4("ld.shared.v4.u32", "r"(a)));
    *cycles = t1 - t0;
    *out = x + y + z + w;
}

__constant__ unsigned cdata[64];

// which: 0 = the address in a (64-bit) register, 1 = an immediate address.
__global__ void ldc(int which, int iters, long long *cycles, unsigned *out) {
    unsigned long long a;
    asm("mov.u64 %0, cdata;" : "=l"(a));
    unsigned x = 0, y = 0, z = 0, w = 0;
    long long t0 = 0, t1 = 0;
    if (which == 0) TIMED(LD1("ld.const.u32", "l"(a)));
    if (which == 1) TIMED(asm volatile(REP32("ld.const.u32 %0, [cdata+16];\n\t") : "+r"(x)));
    *cycles = t1 - t0;
    *out = x + y + z + w;
}

// LDGSTS (cp.async, sm_80 on silicon): a copy of 4, 8 or 16 bytes per thread from global
// memory (an L1 hit after pass 0) to shared memory, then a wait for it; a step is the
// copy's issue to the next copy's issue.
#define CP(BYTES)                                                                      \
    asm volatile(REP32("cp.async.ca.shared.global [%0], [%1], " #BYTES                 \
                       ";\n\tcp.async.wait_all;\n\t")::"r"(s),                         \
                 "l"(g)                                                                \
                 : "memory")
__global__ void ldgsts(const unsigned *g, int which, int iters, long long *cycles) {
    __shared__ __align__(16) unsigned buf[4];
    unsigned s = (unsigned)__cvta_generic_to_shared(buf);
    long long t0 = 0, t1 = 0;
    if (which == 0) TIMED(CP(4));
    if (which == 1) TIMED(CP(8));
    if (which == 2) TIMED(CP(16));
    *cycles = t1 - t0;
}

// ---- MICRO'25 register-file read conflicts (section 3, Listing 1; section 5.3) ----------
// Twelve values live through the timed region. regsim's register allocator gives them
// registers of known parity (a bank is the register's parity): e1, e3, e5, e7, e9, e11
// even, e0, e2, e4, e6, e8, e10 odd; crates/cli's calibration tests check this on the
// committed PTX, so a change of allocation cannot silently change what is measured. On
// silicon, ptxas allocates its own registers: these kernels are for the simulator.
#define E_DEFS                                                                         \
    ".reg .f32 e<12>;\n\t.reg .f32 d<2>;\n\t.reg .u64 c<2>;\n\t"                        \
    "add.f32 e0, %2, 0f3F800000;\n\tadd.f32 e1, %2, 0f40000000;\n\t"                    \
    "add.f32 e2, %2, 0f40400000;\n\tadd.f32 e3, %2, 0f40800000;\n\t"                    \
    "add.f32 e4, %2, 0f40A00000;\n\tadd.f32 e5, %2, 0f40C00000;\n\t"                    \
    "add.f32 e6, %2, 0f40E00000;\n\tadd.f32 e7, %2, 0f41000000;\n\t"                    \
    "add.f32 e8, %2, 0f41100000;\n\tadd.f32 e9, %2, 0f41200000;\n\t"                    \
    "add.f32 e10, %2, 0f41300000;\n\tadd.f32 e11, %2, 0f41400000;\n\t"
#define E_USES                                                                         \
    "add.f32 d0, d0, d1;\n\tadd.f32 d0, d0, e0;\n\tadd.f32 d0, d0, e1;\n\t"             \
    "add.f32 d0, d0, e2;\n\tadd.f32 d0, d0, e3;\n\tadd.f32 d0, d0, e4;\n\t"             \
    "add.f32 d0, d0, e5;\n\tadd.f32 d0, d0, e6;\n\tadd.f32 d0, d0, e7;\n\t"             \
    "add.f32 d0, d0, e8;\n\tadd.f32 d0, d0, e9;\n\tadd.f32 d0, d0, e10;\n\t"            \
    "add.f32 d0, d0, e11;\n\tmov.f32 %1, d0;\n\t"

// Listing 1: CLOCK; NOP; FFMA R11, R10, R12, R14; FFMA R13, R16, R_X, R_Y; NOP; CLOCK
// (a `mov` of an immediate stands for each NOP: it reads no register). The first FFMA's
// sources are all even; the second's first source is even, X and Y as named.
#define FFMA_PAIR(NAME, X, Y)                                                          \
    __global__ void NAME(float a, long long *cycles, float *out) {                     \
        long long c = 0;                                                               \
        float r = 0;                                                                   \
        _Pragma("unroll 1") for (int pass = 0; pass < 2; pass++) {                     \
            asm volatile("{\n\t" E_DEFS "mov.u64 c0, %%clock64;\n\t"                   \
                         "mov.f32 d1, 0f00000000;\n\t"                                 \
                         "fma.rn.f32 d0, e1, e3, e5;\n\t"                              \
                         "fma.rn.f32 d1, e7, " X ", " Y ";\n\t"                        \
                         "mov.f32 d1, 0f00000000;\n\t"                                 \
                         "mov.u64 c1, %%clock64;\n\t"                                  \
                         "sub.s64 %0, c1, c0;\n\t" E_USES "}"                          \
                         : "=l"(c), "=f"(r)                                            \
                         : "f"(a));                                                    \
        }                                                                              \
        *cycles = c;                                                                   \
        *out = r;                                                                      \
    }
FFMA_PAIR(ffma_pair_odd_odd, "e0", "e2")
FFMA_PAIR(ffma_pair_even_odd, "e9", "e2")
FFMA_PAIR(ffma_pair_even_even, "e9", "e11")

// Section 5.3: "FFMA instructions with all three source operands in the same bank
// generate a 2-cycle bubble". 64 independent FFMAs alternating between two sets of three
// even sources (no source in the slot where the previous FFMA had it: no register-file
// cache hit), straight-line between the clock reads.
#define BANK3_STEPS 64
#define FFMA_BANK3 "fma.rn.f32 d0, e1, e3, e5;\n\tfma.rn.f32 d1, e7, e9, e11;\n\t"
__global__ void ffma_bank3(float a, long long *cycles, float *out) {
    long long c = 0;
    float r = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {
        asm volatile("{\n\t" E_DEFS "mov.u64 c0, %%clock64;\n\t" REP32(FFMA_BANK3)
                     "mov.u64 c1, %%clock64;\n\t"
                     "sub.s64 %0, c1, c0;\n\t" E_USES "}"
                     : "=l"(c), "=f"(r)
                     : "f"(a));
    }
    *cycles = c;
    *out = r;
}

// ---- Tensor cores and atomics ---------------------------------------------------------
// mma_dep: a dependent chain of mma.sync.m16n8k16.row.col.f32.f16.f16.f32 (sm_80 on
// silicon) in one warp, each reading the previous one's accumulator (D = A.B + D):
// issue to dependent issue. wmma_dep: the same with wmma.mma.sync m16n16k16 f32 (Volta's
// warp-level matrix instruction, sm_70). Lane 0 writes the cycles.
#define MMA_STEPS 64
// Reads the clock after an instruction that reads `x`, so that the last mma's latency is
// timed too (a bare clock64 issues right after the last mma issues: 63 latencies in 64
// steps).
__device__ __forceinline__ long long clock_after_f(float x) {
    long long t;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.eq.f32 q, %1, 0f00000000;\n\tmov.u64 %0, %%clock64;\n\t}"
                 : "=l"(t)
                 : "f"(x));
    return t;
}
#define MMA1                                                                           \
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "             \
    "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n\t"
__global__ void mma_dep(unsigned a0, long long *cycles, float *out) {
    unsigned a = a0 + threadIdx.x;
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
        t0 = clock64();
        asm volatile(REP32(MMA1) REP32(MMA1)
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                     : "r"(a), "r"(a), "r"(a), "r"(a), "r"(a), "r"(a));
        t1 = clock_after_f(d3);
    }
    if (threadIdx.x == 0) *cycles = t1 - t0;
    out[threadIdx.x] = d0 + d1 + d2 + d3;
}

#define WMMA1                                                                          \
    "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 "                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %8, %8, %8, %8, %8, %8, %8}, "              \
    "{%8, %8, %8, %8, %8, %8, %8, %8}, {%0, %1, %2, %3, %4, %5, %6, %7};\n\t"
__global__ void wmma_dep(unsigned a0, long long *cycles, float *out) {
    unsigned a = a0 + threadIdx.x;
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0, d4 = 0, d5 = 0, d6 = 0, d7 = 0;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the instruction cache
        t0 = clock64();
        asm volatile(REP32(WMMA1) REP32(WMMA1)
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3), "+f"(d4), "+f"(d5),
                       "+f"(d6), "+f"(d7)
                     : "r"(a));
        t1 = clock_after_f(d7);
    }
    if (threadIdx.x == 0) *cycles = t1 - t0;
    out[threadIdx.x] = d0 + d1 + d2 + d3 + d4 + d5 + d6 + d7;
}

// atom_global_dep / atom_shared_dep: one thread, a dependent chain of atom.add.u32 on one
// address, each adding the value the previous one returned (x' = m, m' = m + x): issue to
// dependent issue. The host checks the final value of the chain.
#define ATOMSTEPS 32
__global__ void atom_global_dep(unsigned *g, int iters, long long *cycles, unsigned *out) {
    unsigned x = 1;
    long long t0 = 0, t1 = 0;
    *g = 0;
    __threadfence();
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {  // pass 0 warms the caches
        x = 1;
        *g = 0;
        t0 = clock64();
#pragma unroll 1
        for (int i = 0; i < iters; i++)
            asm volatile(REP32("atom.global.add.u32 %0, [%1], %0;\n\t") : "+r"(x) : "l"(g)
                         : "memory");
        t1 = clock64();
    }
    *cycles = t1 - t0;
    *out = x;
}

__global__ void atom_shared_dep(int iters, long long *cycles, unsigned *out) {
    __shared__ unsigned m;
    unsigned s = (unsigned)__cvta_generic_to_shared(&m);
    unsigned x = 1;
    long long t0 = 0, t1 = 0;
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {
        x = 1;
        m = 0;
        __syncwarp();
        t0 = clock64();
#pragma unroll 1
        for (int i = 0; i < iters; i++)
            asm volatile(REP32("atom.shared.add.u32 %0, [%1], %0;\n\t") : "+r"(x) : "r"(s)
                         : "memory");
        t1 = clock64();
    }
    *cycles = t1 - t0;
    *out = x;
}

// The value the atomic chain leaves in x after `steps` steps from x = 1, m = 0.
static unsigned atom_chain(int steps) {
    unsigned x = 1, m = 0;
    for (int i = 0; i < steps; i++) {
        unsigned old = m;
        m = m + x;
        x = old;
    }
    return x;
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
    if (cold) {
        // A host copy may leave its lines in the L2 (regsim's `l2.fill_on_host_copy`):
        // copy twice the L2's size over other memory so that the ring's lines are gone.
        cudaDeviceProp prop;
        CHECK(cudaGetDeviceProperties(&prop, 0));
        size_t flush_bytes = 2 * (size_t)prop.l2CacheSize;
        char *flush = (char *)dev_alloc(flush_bytes);
        char *zeros = (char *)calloc(flush_bytes, 1);
        CHECK(cudaMemcpy(flush, zeros, flush_bytes, cudaMemcpyHostToDevice));
        free(zeros);
        CHECK(cudaFree(flush));
    }
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
    const int ld_iters = 8;
    const char *widths[3] = {"32", "64", "128"};
    unsigned *gbuf = (unsigned *)dev_alloc(16);
    CHECK(cudaMemset(gbuf, 0, 16));
    char name[32];
    for (int w = 0; w < 3; w++) {
        ldg<<<1, 1>>>(gbuf, w, ld_iters, d_cycles, (unsigned *)d_out);
        snprintf(name, sizeof name, "ldg%s", widths[w]);
        alu_result(name, d_cycles, ld_iters * LDSTEPS);
    }
    for (int w = 0; w < 3; w++) {
        lds<<<1, 1>>>(w, ld_iters, d_cycles, (unsigned *)d_out);
        snprintf(name, sizeof name, "lds%s", widths[w]);
        alu_result(name, d_cycles, ld_iters * LDSTEPS);
    }
    ldc<<<1, 1>>>(0, ld_iters, d_cycles, (unsigned *)d_out);
    alu_result("ldc32", d_cycles, ld_iters * LDSTEPS);
    ldc<<<1, 1>>>(1, ld_iters, d_cycles, (unsigned *)d_out);
    alu_result("ldc32_imm", d_cycles, ld_iters * LDSTEPS);
    for (int w = 0; w < 3; w++) {
        ldgsts<<<1, 1>>>(gbuf, w, ld_iters, d_cycles);
        snprintf(name, sizeof name, "ldgsts%s", widths[w]);
        alu_result(name, d_cycles, ld_iters * LDSTEPS);
    }
    CHECK(cudaFree(gbuf));
    ffma_pair_odd_odd<<<1, 1>>>(1.0f, d_cycles, (float *)d_out);
    alu_result("ffma_pair_odd_odd", d_cycles, 1);
    ffma_pair_even_odd<<<1, 1>>>(1.0f, d_cycles, (float *)d_out);
    alu_result("ffma_pair_even_odd", d_cycles, 1);
    ffma_pair_even_even<<<1, 1>>>(1.0f, d_cycles, (float *)d_out);
    alu_result("ffma_pair_even_even", d_cycles, 1);
    ffma_bank3<<<1, 1>>>(1.0f, d_cycles, (float *)d_out);
    alu_result("ffma_bank3", d_cycles, BANK3_STEPS);
    void *mma_out = dev_alloc(32 * sizeof(float));
    mma_dep<<<1, 32>>>(0x3c003c00u, d_cycles, (float *)mma_out);
    alu_result("mma_dep", d_cycles, MMA_STEPS);
    wmma_dep<<<1, 32>>>(0x3c003c00u, d_cycles, (float *)mma_out);
    alu_result("wmma_dep", d_cycles, MMA_STEPS);
    CHECK(cudaFree(mma_out));
    unsigned *abuf = (unsigned *)dev_alloc(sizeof(unsigned));
    unsigned ax = 0;
    atom_global_dep<<<1, 1>>>(abuf, ld_iters, d_cycles, (unsigned *)d_out);
    alu_result("atom_global_dep", d_cycles, ld_iters * ATOMSTEPS);
    CHECK(cudaMemcpy(&ax, d_out, sizeof ax, cudaMemcpyDeviceToHost));
    ok &= ax == atom_chain(ld_iters * ATOMSTEPS);
    atom_shared_dep<<<1, 1>>>(ld_iters, d_cycles, (unsigned *)d_out);
    alu_result("atom_shared_dep", d_cycles, ld_iters * ATOMSTEPS);
    CHECK(cudaMemcpy(&ax, d_out, sizeof ax, cudaMemcpyDeviceToHost));
    ok &= ax == atom_chain(ld_iters * ATOMSTEPS);
    CHECK(cudaFree(abuf));
    empty<<<1, 32>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf(ok ? "PASS\n" : "FAIL: a chase or an atomic chain ended at the wrong value\n");
    return ok ? 0 : 1;
}
