// Shared host-side helpers for the built-in CUDA workloads: API error checking, a
// fixed-seed random generator, command-line size selection and the PASS/FAIL verdict.
//
// Every workload prints exactly one final line on stdout, `PASS` or `FAIL: <reason>`,
// and exits 0 on PASS, 1 on FAIL and 2 on a CUDA API error or bad command line.
// The simulator's end-to-end tests rely on that contract.
#pragma once

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t check_err_ = (call);                                              \
        if (check_err_ != cudaSuccess) {                                              \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(check_err_));                                  \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

// A launch reports configuration errors through cudaGetLastError and execution errors
// at the next synchronisation; check both right after every launch.
#define CUDA_CHECK_LAUNCH()                       \
    do {                                          \
        CUDA_CHECK(cudaGetLastError());           \
        CUDA_CHECK(cudaDeviceSynchronize());      \
    } while (0)

// Numerical Recipes LCG. Low bits of an LCG are weak, so every derived value uses the
// high bits. The same seed gives the same input on every host, which is all we need.
struct Lcg {
    uint32_t state;
    explicit Lcg(uint32_t seed) : state(seed) {}
    uint32_t next() {
        state = state * 1664525u + 1013904223u;
        return state;
    }
    // Uniform in [0, n), n > 0.
    uint32_t below(uint32_t n) { return (uint32_t)(((uint64_t)next() * n) >> 32); }
    // Uniform in [0, 1) with 24 bits of precision.
    float unit() { return (float)(next() >> 8) * (1.0f / 16777216.0f); }
    float range(float lo, float hi) { return lo + (hi - lo) * unit(); }
};

// Returns true for `--large`, false for no argument; anything else is a usage error.
static inline bool parse_large_flag(int argc, char** argv) {
    bool large = false;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--large") == 0) {
            large = true;
        } else {
            fprintf(stderr, "usage: %s [--large]\n", argv[0]);
            exit(2);
        }
    }
    return large;
}

static inline int report_pass() {
    printf("PASS\n");
    return 0;
}

static inline int report_fail(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    printf("FAIL: ");
    vprintf(fmt, args);
    printf("\n");
    va_end(args);
    return 1;
}

static inline double abs_d(double x) { return x < 0 ? -x : x; }

static inline int clamp_i(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// `n` floats uniform in [0, 1) from `rng`, in malloc'ed memory the caller frees.
static inline float* random_unit_floats(Lcg& rng, int n) {
    float* p = (float*)malloc(sizeof(float) * n);
    for (int i = 0; i < n; ++i) p[i] = rng.unit();
    return p;
}
