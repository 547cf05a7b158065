// Runs a CUDA workload on the CPU, for checking the workloads' host code and kernel logic
// on machines without a GPU. Not a simulator: one CTA at a time, every CUDA thread a
// ucontext fiber, switched only at __syncthreads and at warp-collective operations.
//
// run.sh force-includes this header into a copy of each workload in which
// `k<<<cfg>>>(args)` has become `cpu_launch(cpu_config(cfg), k, args)` and
// `extern __shared__ T name[];` has become `T* name = (T*)cpu_dynamic_smem();`.
//
// What it cannot show: anything about timing, float contraction or the device math
// library (host libm is used), nor races between CTAs (they never overlap here).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <vector>

#include <ucontext.h>

// ---- language extensions ----
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __constant__
// CTAs run one after another, so one static instance per __shared__ variable suffices.
#define __shared__ static

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct alignas(16) float4 {
    float x, y, z, w;
};
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
struct alignas(16) int4 {
    int x, y, z, w;
};

// ---- runtime API ----
enum cudaError_t { cudaSuccess = 0, cudaErrorCpuCheck = 1 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
typedef int cudaEvent_t;

static inline const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "cpu-check error"; }
template <typename T>
static inline cudaError_t cudaMalloc(T** p, size_t n) {
    *p = (T*)malloc(n);
    return *p ? cudaSuccess : cudaErrorCpuCheck;
}
template <typename T>
static inline cudaError_t cudaMallocHost(T** p, size_t n) { return cudaMalloc(p, n); }
static inline cudaError_t cudaFree(void* p) {
    free(p);
    return cudaSuccess;
}
static inline cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }
static inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
    memcpy(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void* d, int v, size_t n) {
    memset(d, v, n);
    return cudaSuccess;
}
template <typename T>
static inline cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t n) {
    if (n > sizeof(T)) return cudaErrorCpuCheck;
    memcpy(&symbol, src, n);
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
static inline cudaError_t cudaGetLastError() { return cudaSuccess; }
static inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
    *e = 0;
    return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t, int = 0) { return cudaSuccess; }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
    *ms = 0.0f;
    return cudaSuccess;
}

// ---- fibers ----
enum class FiberState { Running, AtBarrier, AtWarp, Done };
struct Fiber {
    ucontext_t context;
    std::vector<char> stack;
    uint3 tid;
    unsigned linear;
    FiberState state;
};

static std::vector<Fiber> cpu_fibers;
static Fiber* cpu_current;
static ucontext_t cpu_scheduler;
static dim3 cpu_block_idx_value, cpu_block_dim_value, cpu_grid_dim_value;
static std::vector<char> cpu_dynamic_shared;
static std::vector<uint64_t> cpu_warp_slots;     // 32 per warp: values deposited
static std::vector<uint64_t> cpu_warp_snapshot;  // 32 per warp: values of the last exchange
static void (*cpu_body)();

#define threadIdx (cpu_current->tid)
#define blockIdx ((const uint3&)cpu_block_idx_value)
#define blockDim ((const uint3&)cpu_block_dim_value)
#define gridDim ((const uint3&)cpu_grid_dim_value)

static void cpu_yield(FiberState s) {
    cpu_current->state = s;
    swapcontext(&cpu_current->context, &cpu_scheduler);
}
static void cpu_fiber_entry() {
    cpu_body();
    cpu_current->state = FiberState::Done;
    swapcontext(&cpu_current->context, &cpu_scheduler);
}

static inline void __syncthreads() { cpu_yield(FiberState::AtBarrier); }
static inline void __syncwarp(unsigned = 0xffffffffu) {}

// All 32 lanes deposit a value and receive everyone's. The fiber model cannot tell
// partial masks apart, and the workloads only use full masks.
static const uint64_t* cpu_warp_exchange(uint64_t value) {
    unsigned warp = cpu_current->linear / 32, lane = cpu_current->linear % 32;
    cpu_warp_slots[warp * 32 + lane] = value;
    cpu_yield(FiberState::AtWarp);
    return &cpu_warp_snapshot[warp * 32];
}

static void cpu_run_block() {
    size_t n = cpu_fibers.size();
    for (;;) {
        bool ran = false;
        for (size_t i = 0; i < n; ++i) {
            if (cpu_fibers[i].state != FiberState::Running) continue;
            cpu_current = &cpu_fibers[i];
            swapcontext(&cpu_scheduler, &cpu_fibers[i].context);
            ran = true;
        }
        if (ran) continue;
        size_t done = 0, at_barrier = 0;
        bool released = false;
        for (size_t w = 0; w * 32 < n; ++w) {
            size_t lanes = 0, at_warp = 0, lanes_done = 0;
            for (size_t l = w * 32; l < n && l < w * 32 + 32; ++l) {
                ++lanes;
                if (cpu_fibers[l].state == FiberState::AtWarp) ++at_warp;
                if (cpu_fibers[l].state == FiberState::Done) ++lanes_done;
            }
            if (at_warp == 0) continue;
            if (at_warp + lanes_done == lanes && lanes_done > 0) {
                fprintf(stderr, "cpu-check: warp collective with exited lanes\n");
                exit(3);
            }
            if (at_warp == lanes) {
                for (size_t l = 0; l < 32; ++l) cpu_warp_snapshot[w * 32 + l] = cpu_warp_slots[w * 32 + l];
                for (size_t l = w * 32; l < w * 32 + lanes; ++l) cpu_fibers[l].state = FiberState::Running;
                released = true;
            }
        }
        if (released) continue;
        for (auto& f : cpu_fibers) {
            if (f.state == FiberState::Done) ++done;
            if (f.state == FiberState::AtBarrier) ++at_barrier;
        }
        if (done == n) return;
        if (at_barrier + done == n) {
            if (done != 0) {
                fprintf(stderr, "cpu-check: __syncthreads after some threads exited\n");
                exit(3);
            }
            for (auto& f : cpu_fibers) f.state = FiberState::Running;
            continue;
        }
        fprintf(stderr, "cpu-check: deadlock\n");
        exit(3);
    }
}

struct CpuLaunchConfig {
    dim3 grid, block;
    size_t shared;
};
static inline CpuLaunchConfig cpu_config(dim3 grid, dim3 block, size_t shared = 0) {
    return CpuLaunchConfig{grid, block, shared};
}

template <typename... Params, typename... Args>
static void cpu_launch(CpuLaunchConfig cfg, void (*kernel)(Params...), Args... args) {
    static void (*the_kernel)(Params...);
    static std::tuple<Params...>* the_args;
    std::tuple<Params...> converted((Params)args...);
    the_kernel = kernel;
    the_args = &converted;
    cpu_body = [] { std::apply(the_kernel, *the_args); };

    unsigned threads = cfg.block.x * cfg.block.y * cfg.block.z;
    cpu_block_dim_value = cfg.block;
    cpu_grid_dim_value = cfg.grid;
    cpu_dynamic_shared.assign(cfg.shared + 16, 0);
    cpu_fibers.resize(threads);
    cpu_warp_slots.assign((threads + 31) / 32 * 32, 0);
    cpu_warp_snapshot.assign((threads + 31) / 32 * 32, 0);
    for (auto& f : cpu_fibers) f.stack.resize(256 * 1024);
    for (unsigned bz = 0; bz < cfg.grid.z; ++bz)
        for (unsigned by = 0; by < cfg.grid.y; ++by)
            for (unsigned bx = 0; bx < cfg.grid.x; ++bx) {
                cpu_block_idx_value = dim3(bx, by, bz);
                for (unsigned t = 0; t < threads; ++t) {
                    Fiber& f = cpu_fibers[t];
                    f.linear = t;
                    f.tid = uint3{t % cfg.block.x, t / cfg.block.x % cfg.block.y, t / (cfg.block.x * cfg.block.y)};
                    f.state = FiberState::Running;
                    getcontext(&f.context);
                    f.context.uc_stack.ss_sp = f.stack.data();
                    f.context.uc_stack.ss_size = f.stack.size();
                    f.context.uc_link = nullptr;
                    makecontext(&f.context, cpu_fiber_entry, 0);
                }
                cpu_run_block();
            }
}

#define cpu_dynamic_smem() ((void*)cpu_dynamic_shared.data())

// ---- device functions ----
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
// The fast intrinsics at the library's precision (tighter than the device's); macros,
// because glibc declares functions of these names.
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline int min(int a, int b) { return a < b ? a : b; }

static inline unsigned cpu_lane() { return cpu_current->linear % 32; }

template <typename T>
static inline uint64_t cpu_bits(T v) {
    uint64_t b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}
template <typename T>
static inline T cpu_from_bits(uint64_t b) {
    T v;
    memcpy(&v, &b, sizeof(T));
    return v;
}
template <typename T>
static inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
    const uint64_t* all = cpu_warp_exchange(cpu_bits(v));
    unsigned lane = cpu_lane();
    unsigned base = lane & ~(unsigned)(width - 1);
    return cpu_from_bits<T>(all[base + ((unsigned)src & (width - 1))]);
}
template <typename T>
static inline T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
    const uint64_t* all = cpu_warp_exchange(cpu_bits(v));
    unsigned lane = cpu_lane();
    unsigned base = lane & ~(unsigned)(width - 1);
    return (lane - base) >= delta ? cpu_from_bits<T>(all[lane - delta]) : v;
}
template <typename T>
static inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
    const uint64_t* all = cpu_warp_exchange(cpu_bits(v));
    unsigned lane = cpu_lane();
    unsigned base = lane & ~(unsigned)(width - 1);
    return (lane - base) + delta < (unsigned)width ? cpu_from_bits<T>(all[lane + delta]) : v;
}
template <typename T>
static inline T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
    const uint64_t* all = cpu_warp_exchange(cpu_bits(v));
    unsigned lane = cpu_lane();
    unsigned base = lane & ~(unsigned)(width - 1);
    unsigned src = lane ^ (unsigned)mask;
    return src >= base && src < base + width ? cpu_from_bits<T>(all[src]) : v;
}
static inline unsigned __ballot_sync(unsigned, int pred) {
    const uint64_t* all = cpu_warp_exchange(pred != 0);
    unsigned m = 0;
    for (int l = 0; l < 32; ++l) m |= (unsigned)all[l] << l;
    return m;
}
static inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
static inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == 0xffffffffu; }
// Fibers run one at a time, so the narrowest legal answer: the calling lane alone.
static inline unsigned __activemask() { return 1u << cpu_lane(); }

// Atomics: fibers never interleave inside a call. A CAS retry loop therefore always
// succeeds at its first attempt, which is one legal schedule.
template <typename T>
static inline T atomicAdd(T* a, T v) {
    T old = *a;
    *a = old + v;
    return old;
}
static inline int atomicMin(int* a, int v) {
    int old = *a;
    if (v < old) *a = v;
    return old;
}
static inline int atomicMax(int* a, int v) {
    int old = *a;
    if (v > old) *a = v;
    return old;
}
static inline unsigned atomicOr(unsigned* a, unsigned v) {
    unsigned old = *a;
    *a = old | v;
    return old;
}
static inline unsigned atomicXor(unsigned* a, unsigned v) {
    unsigned old = *a;
    *a = old ^ v;
    return old;
}
static inline unsigned atomicInc(unsigned* a, unsigned limit) {
    unsigned old = *a;
    *a = old >= limit ? 0 : old + 1;
    return old;
}
template <typename T>
static inline T atomicExch(T* a, T v) {
    T old = *a;
    *a = v;
    return old;
}
static inline unsigned atomicCAS(unsigned* a, unsigned compare, unsigned v) {
    unsigned old = *a;
    if (old == compare) *a = v;
    return old;
}
