// Monte Carlo pricing of a European call option in double precision. Each thread runs
// its own 64-bit LCG, turns pairs of uniforms into normal variates with the Box-Muller
// transform (log, sqrt, sin, cos) and accumulates the payoff exp(...) and its square.
// Exercises f64 arithmetic and the double-precision math library. The host replays the
// same per-thread streams, and the pooled estimate must agree with the closed-form
// Black-Scholes price within its statistical error.
#include "../common/workload.h"

#define TWO_PI 6.283185307179586476925

struct OptionParams {
    double spot, strike, rate, volatility, years;
};

__host__ __device__ inline uint64_t lcg64_next(uint64_t* state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state;
}

// Uniform in (0, 1] from the top 53 bits, never 0 so that log() is finite.
__host__ __device__ inline double unit_open(uint64_t bits) {
    return (double)((bits >> 11) + 1) * (1.0 / 9007199254740992.0);
}

__host__ __device__ inline uint64_t thread_seed(int tid) {
    uint64_t state = 0x853c49e6748fea9bull ^ (0x9e3779b97f4a7c15ull * (uint64_t)(tid + 1));
    lcg64_next(&state);
    return state;
}

// Simulates 2 * pairs paths for one thread; returns the payoff sum and its sum of squares.
__host__ __device__ inline void simulate(int tid, int pairs, OptionParams o, double* sum, double* sum_sq) {
    uint64_t state = thread_seed(tid);
    double drift = (o.rate - 0.5 * o.volatility * o.volatility) * o.years;
    double diffusion = o.volatility * sqrt(o.years);
    double s = 0.0, sq = 0.0;
    for (int p = 0; p < pairs; ++p) {
        double u1 = unit_open(lcg64_next(&state));
        double u2 = unit_open(lcg64_next(&state));
        double radius = sqrt(-2.0 * log(u1));
        double z[2] = {radius * cos(TWO_PI * u2), radius * sin(TWO_PI * u2)};
        for (int k = 0; k < 2; ++k) {
            double final_price = o.spot * exp(drift + diffusion * z[k]);
            double payoff = final_price > o.strike ? final_price - o.strike : 0.0;
            s += payoff;
            sq += payoff * payoff;
        }
    }
    *sum = s;
    *sum_sq = sq;
}

__global__ void monte_carlo(int pairs, OptionParams o, double* __restrict__ sums, double* __restrict__ sum_sqs) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    double s, sq;
    simulate(tid, pairs, o, &s, &sq);
    sums[tid] = s;
    sum_sqs[tid] = sq;
}

static double normal_cdf_exact(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int pairs = large ? 64 : 4;
    const int blocks = 32;
    const int threads = 64;
    const int total_threads = blocks * threads;
    OptionParams o = {100.0, 105.0, 0.03, 0.25, 1.5};

    double *d_sums, *d_sum_sqs;
    CUDA_CHECK(cudaMalloc(&d_sums, sizeof(double) * total_threads));
    CUDA_CHECK(cudaMalloc(&d_sum_sqs, sizeof(double) * total_threads));
    monte_carlo<<<blocks, threads>>>(pairs, o, d_sums, d_sum_sqs);
    CUDA_CHECK_LAUNCH();
    double* h_sums = (double*)malloc(sizeof(double) * total_threads);
    double* h_sum_sqs = (double*)malloc(sizeof(double) * total_threads);
    CUDA_CHECK(cudaMemcpy(h_sums, d_sums, sizeof(double) * total_threads, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_sum_sqs, d_sum_sqs, sizeof(double) * total_threads, cudaMemcpyDeviceToHost));

    // Device and host math libraries differ by an ulp or two per call and the device
    // may fuse multiply-adds; per-thread sums of a few hundred terms stay within 1e-9.
    int result = -1;
    double total = 0.0, total_sq = 0.0;
    for (int t = 0; t < total_threads; ++t) {
        double s, sq;
        simulate(t, pairs, o, &s, &sq);
        if (!(abs_d(h_sums[t] - s) <= 1e-9 * (s + 1.0)) || !(abs_d(h_sum_sqs[t] - sq) <= 1e-9 * (sq + 1.0))) {
            result = report_fail("thread %d: sums %.17g %.17g, expected %.17g %.17g", t, h_sums[t],
                                 h_sum_sqs[t], s, sq);
            break;
        }
        total += h_sums[t];
        total_sq += h_sum_sqs[t];
    }

    if (result < 0) {
        double paths = 2.0 * pairs * total_threads;
        double discount = exp(-o.rate * o.years);
        double mean = total / paths;
        double variance = total_sq / paths - mean * mean;
        double estimate = discount * mean;
        double std_error = discount * sqrt(variance / paths);
        double vol_sqrt_t = o.volatility * sqrt(o.years);
        double d1 = (log(o.spot / o.strike) + (o.rate + 0.5 * o.volatility * o.volatility) * o.years) / vol_sqrt_t;
        double d2 = d1 - vol_sqrt_t;
        double exact = o.spot * normal_cdf_exact(d1) - o.strike * discount * normal_cdf_exact(d2);
        printf("montecarlo: %.0f paths, estimate %.6f +- %.6f, closed form %.6f\n", paths, estimate,
               std_error, exact);
        // The inputs are fixed, so this either always holds or never does; it guards
        // against a generator or transform that is wrong on host and device alike.
        if (abs_d(estimate - exact) > 5.0 * std_error) {
            result = report_fail("estimate %.6f is more than 5 standard errors from %.6f", estimate, exact);
        }
    }

    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_sum_sqs));
    free(h_sums);
    free(h_sum_sqs);
    return result < 0 ? report_pass() : result;
}
