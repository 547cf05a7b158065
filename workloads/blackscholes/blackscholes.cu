// European call and put prices by the Black-Scholes formula, one option per thread in a
// grid-stride loop. Exercises the single-precision math library (logf, expf, sqrtf,
// division) and a polynomial approximation of the normal CDF (Abramowitz & Stegun
// 26.2.17, absolute error below 7.5e-8). The host evaluates the same formula in double.
#include "../common/workload.h"

#define RISK_FREE 0.02f
#define VOLATILITY 0.30f

__device__ float normal_cdf(float d) {
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
                a5 = 1.330274429f;
    const float inv_sqrt_2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))));
    float tail = inv_sqrt_2pi * expf(-0.5f * d * d) * poly;
    return d > 0.0f ? 1.0f - tail : tail;
}

__global__ void black_scholes(const float* __restrict__ spot, const float* __restrict__ strike,
                              const float* __restrict__ years, float* __restrict__ call,
                              float* __restrict__ put, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float s = spot[i], x = strike[i], t = years[i];
        float vol_sqrt_t = VOLATILITY * sqrtf(t);
        float d1 = (logf(s / x) + (RISK_FREE + 0.5f * VOLATILITY * VOLATILITY) * t) / vol_sqrt_t;
        float d2 = d1 - vol_sqrt_t;
        float cnd1 = normal_cdf(d1);
        float cnd2 = normal_cdf(d2);
        float discounted = x * expf(-RISK_FREE * t);
        call[i] = s * cnd1 - discounted * cnd2;
        put[i] = discounted * (1.0f - cnd2) - s * (1.0f - cnd1);
    }
}

static double normal_cdf_host(double d) {
    const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937, a4 = -1.821255978,
                 a5 = 1.330274429;
    const double inv_sqrt_2pi = 0.39894228040143267794;
    double k = 1.0 / (1.0 + 0.2316419 * abs_d(d));
    double poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))));
    double tail = inv_sqrt_2pi * exp(-0.5 * d * d) * poly;
    return d > 0.0 ? 1.0 - tail : tail;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 400000 : 20000;
    const int blocks = 40;
    const int threads = 128;

    float* h_spot = (float*)malloc(sizeof(float) * n);
    float* h_strike = (float*)malloc(sizeof(float) * n);
    float* h_years = (float*)malloc(sizeof(float) * n);
    float* h_call = (float*)malloc(sizeof(float) * n);
    float* h_put = (float*)malloc(sizeof(float) * n);
    Lcg rng(5150u);
    for (int i = 0; i < n; ++i) {
        h_spot[i] = rng.range(5.0f, 30.0f);
        h_strike[i] = rng.range(1.0f, 100.0f);
        h_years[i] = rng.range(0.25f, 10.0f);
    }

    float *d_spot, *d_strike, *d_years, *d_call, *d_put;
    CUDA_CHECK(cudaMalloc(&d_spot, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_strike, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_years, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_call, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_put, sizeof(float) * n));
    CUDA_CHECK(cudaMemcpy(d_spot, h_spot, sizeof(float) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_strike, h_strike, sizeof(float) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_years, h_years, sizeof(float) * n, cudaMemcpyHostToDevice));

    black_scholes<<<blocks, threads>>>(d_spot, d_strike, d_years, d_call, d_put, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_call, d_call, sizeof(float) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_put, d_put, sizeof(float) * n, cudaMemcpyDeviceToHost));

    // Prices are differences of terms of size S and X, so float rounding is relative to
    // S + X, not to the (possibly tiny) price. The estimated float error is about
    // 1.5e-6 * (S + X); 1e-5 leaves a wide margin while any formula slip is far larger.
    int result = -1;
    for (int i = 0; i < n; ++i) {
        double s = h_spot[i], x = h_strike[i], t = h_years[i];
        double r = RISK_FREE, v = VOLATILITY;
        double vol_sqrt_t = v * sqrt(t);
        double d1 = (log(s / x) + (r + 0.5 * v * v) * t) / vol_sqrt_t;
        double d2 = d1 - vol_sqrt_t;
        double discounted = x * exp(-r * t);
        double call_ref = s * normal_cdf_host(d1) - discounted * normal_cdf_host(d2);
        double put_ref = discounted * (1.0 - normal_cdf_host(d2)) - s * (1.0 - normal_cdf_host(d1));
        double tol = 1e-5 * (s + x);
        if (!(abs_d(h_call[i] - call_ref) <= tol)) {
            result = report_fail("call[%d] = %.7g, expected %.7g", i, (double)h_call[i], call_ref);
            break;
        }
        if (!(abs_d(h_put[i] - put_ref) <= tol)) {
            result = report_fail("put[%d] = %.7g, expected %.7g", i, (double)h_put[i], put_ref);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_spot));
    CUDA_CHECK(cudaFree(d_strike));
    CUDA_CHECK(cudaFree(d_years));
    CUDA_CHECK(cudaFree(d_call));
    CUDA_CHECK(cudaFree(d_put));
    free(h_spot);
    free(h_strike);
    free(h_years);
    free(h_call);
    free(h_put);
    return result < 0 ? report_pass() : result;
}
