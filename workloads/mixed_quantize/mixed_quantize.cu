// Mixed-precision accumulation and a quantize/dequantize pass, the pattern of an
// inference layer that keeps its weights and activations in single precision,
// accumulates in double and stores 16-bit codes (regsim issue 28: a built-in workload of
// the f64-conversion class).
//
// accumulate_rows: y = W x for a column-major W, one thread per row; every element is
// widened (cvt.f64.f32) and accumulated by an f64 fused multiply-add, and the sum is
// stored both as double and narrowed to float (cvt.rn.f32.f64).
// quantize: per element of y, the 16-bit code q = trunc(y / step) clamped to +-32767
// (cvt.rzi.s32.f64), its dequantized value q * step (cvt.rn.f64.s32), the residual
// narrowed to float (cvt.rn.f32.f64), the magnitude as unsigned 44.20 fixed point and
// back (cvt.rzi.u64.f64, cvt.rn.f64.u64), and the value as signed 48.16 fixed point
// rounded to nearest and back (cvt.rni.s64.f64, cvt.rn.f64.s64).
//
// The host replays the same operations (std::fma for the fused multiply-adds; the
// quantize pass uses __dmul_rn/__dsub_rn, which nvcc never contracts into an FMA), so
// every output must match bit for bit.
#include "../common/workload.h"

__global__ void accumulate_rows(const float* __restrict__ w, const float* __restrict__ x, int rows,
                                int cols, double* __restrict__ y64, float* __restrict__ y32) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    double acc = 0.0;
    for (int c = 0; c < cols; ++c) acc = fma((double)w[(size_t)c * rows + r], (double)x[c], acc);
    y64[r] = acc;
    y32[r] = (float)acc;
}

struct Quantized {
    int code;
    float dequantized, residual;
    unsigned long long magnitude;
    long long fixed;
    double roundtrip;
};

__host__ __device__ inline double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

__host__ __device__ inline double sub_rn(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

__host__ __device__ inline long long round_to_ll(double v) {
#ifdef __CUDA_ARCH__
    return __double2ll_rn(v);
#else
    return llrint(v);  // the default rounding mode: to nearest, ties to even
#endif
}

__host__ __device__ inline Quantized quantize_one(double v, double step, double inv_step) {
    Quantized q;
    int code = (int)mul_rn(v, inv_step);
    code = code > 32767 ? 32767 : (code < -32767 ? -32767 : code);
    q.code = code;
    double dq = mul_rn((double)code, step);
    q.dequantized = (float)dq;
    q.residual = (float)sub_rn(v, dq);
    q.magnitude = (unsigned long long)mul_rn(v < 0.0 ? -v : v, 1048576.0);
    q.fixed = round_to_ll(mul_rn(v, 65536.0));
    // Both fixed-point forms back to double; their sum is exact for the sizes used.
    q.roundtrip = mul_rn((double)q.magnitude, 1.0 / 1048576.0) + mul_rn((double)q.fixed, 1.0 / 65536.0);
    return q;
}

__global__ void quantize(const double* __restrict__ y, int n, double step, double inv_step,
                         int* __restrict__ codes, float* __restrict__ dequantized,
                         float* __restrict__ residual, unsigned long long* __restrict__ magnitude,
                         long long* __restrict__ fixed, double* __restrict__ roundtrip) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        Quantized q = quantize_one(y[i], step, inv_step);
        codes[i] = q.code;
        dequantized[i] = q.dequantized;
        residual[i] = q.residual;
        magnitude[i] = q.magnitude;
        fixed[i] = q.fixed;
        roundtrip[i] = q.roundtrip;
    }
}

static bool same_bits(const void* a, const void* b, size_t n) { return memcmp(a, b, n) == 0; }

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    const int rows = large ? 65539 : 8195;
    const int cols = large ? 96 : 40;
    const int threads = 128;
    Lcg lcg(2811);
    float* h_w = (float*)malloc(sizeof(float) * (size_t)rows * cols);
    float* h_x = (float*)malloc(sizeof(float) * cols);
    for (size_t i = 0; i < (size_t)rows * cols; ++i) h_w[i] = lcg.range(-1.0f, 1.0f);
    for (int c = 0; c < cols; ++c) h_x[c] = lcg.range(-2.0f, 2.0f);
    // y's standard deviation is sqrt(4 cols / 9) (products of uniforms on [-1,1] and
    // [-2,2]); codes span 1.5 sqrt(cols), about 2.3 deviations, so that the largest sums
    // saturate as a real quantizer's outliers do.
    const double step = 1.5 * sqrt((double)cols) / 32767.0;
    const double inv_step = 1.0 / step;

    float *d_w, *d_x, *d_y32, *d_dq, *d_res;
    double *d_y64, *d_rt;
    int* d_codes;
    unsigned long long* d_mag;
    long long* d_fixed;
    CUDA_CHECK(cudaMalloc(&d_w, sizeof(float) * (size_t)rows * cols));
    CUDA_CHECK(cudaMalloc(&d_x, sizeof(float) * cols));
    CUDA_CHECK(cudaMalloc(&d_y32, sizeof(float) * rows));
    CUDA_CHECK(cudaMalloc(&d_y64, sizeof(double) * rows));
    CUDA_CHECK(cudaMalloc(&d_dq, sizeof(float) * rows));
    CUDA_CHECK(cudaMalloc(&d_res, sizeof(float) * rows));
    CUDA_CHECK(cudaMalloc(&d_rt, sizeof(double) * rows));
    CUDA_CHECK(cudaMalloc(&d_codes, sizeof(int) * rows));
    CUDA_CHECK(cudaMalloc(&d_mag, sizeof(unsigned long long) * rows));
    CUDA_CHECK(cudaMalloc(&d_fixed, sizeof(long long) * rows));
    CUDA_CHECK(cudaMemcpy(d_w, h_w, sizeof(float) * (size_t)rows * cols, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, sizeof(float) * cols, cudaMemcpyHostToDevice));

    accumulate_rows<<<(rows + threads - 1) / threads, threads>>>(d_w, d_x, rows, cols, d_y64, d_y32);
    CUDA_CHECK_LAUNCH();
    // Fewer threads than elements: a grid-stride loop, as a quantizer over a tensor runs.
    quantize<<<16, threads>>>(d_y64, rows, step, inv_step, d_codes, d_dq, d_res, d_mag, d_fixed, d_rt);
    CUDA_CHECK_LAUNCH();

    double* y64 = (double*)malloc(sizeof(double) * rows);
    float* y32 = (float*)malloc(sizeof(float) * rows);
    int* codes = (int*)malloc(sizeof(int) * rows);
    float* dq = (float*)malloc(sizeof(float) * rows);
    float* res = (float*)malloc(sizeof(float) * rows);
    unsigned long long* mag = (unsigned long long*)malloc(sizeof(unsigned long long) * rows);
    long long* fixed = (long long*)malloc(sizeof(long long) * rows);
    double* rt = (double*)malloc(sizeof(double) * rows);
    CUDA_CHECK(cudaMemcpy(y64, d_y64, sizeof(double) * rows, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(y32, d_y32, sizeof(float) * rows, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(codes, d_codes, sizeof(int) * rows, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dq, d_dq, sizeof(float) * rows, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(res, d_res, sizeof(float) * rows, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(mag, d_mag, sizeof(unsigned long long) * rows, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(fixed, d_fixed, sizeof(long long) * rows, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rt, d_rt, sizeof(double) * rows, cudaMemcpyDeviceToHost));

    int result = -1;
    int saturated = 0;
    for (int r = 0; r < rows && result < 0; ++r) {
        double acc = 0.0;
        for (int c = 0; c < cols; ++c) acc = std::fma((double)h_w[(size_t)c * rows + r], (double)h_x[c], acc);
        float acc32 = (float)acc;
        if (!same_bits(&y64[r], &acc, sizeof acc) || !same_bits(&y32[r], &acc32, sizeof acc32)) {
            result = report_fail("row %d: y %.17g (float %.9g), expected %.17g (float %.9g)", r, y64[r],
                                 y32[r], acc, acc32);
            break;
        }
        Quantized q = quantize_one(acc, step, inv_step);
        saturated += q.code == 32767 || q.code == -32767;
        if (codes[r] != q.code || !same_bits(&dq[r], &q.dequantized, sizeof(float)) ||
            !same_bits(&res[r], &q.residual, sizeof(float)) || mag[r] != q.magnitude || fixed[r] != q.fixed ||
            !same_bits(&rt[r], &q.roundtrip, sizeof(double))) {
            result = report_fail(
                "element %d (y %.17g): code %d dequantized %.9g residual %.9g magnitude %llu fixed %lld "
                "roundtrip %.17g, expected %d %.9g %.9g %llu %lld %.17g",
                r, acc, codes[r], dq[r], res[r], mag[r], fixed[r], rt[r], q.code, q.dequantized, q.residual,
                q.magnitude, q.fixed, q.roundtrip);
        }
    }
    // The input is fixed, so these always hold or never do: they guard against a pass
    // that never saturates or always does, which would leave the clamp untested.
    if (result < 0 && (saturated == 0 || saturated == rows))
        result = report_fail("%d of %d codes saturated", saturated, rows);
    if (result < 0) printf("mixed_quantize: %d rows x %d columns, %d codes saturated\n", rows, cols, saturated);

    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y32));
    CUDA_CHECK(cudaFree(d_y64));
    CUDA_CHECK(cudaFree(d_dq));
    CUDA_CHECK(cudaFree(d_res));
    CUDA_CHECK(cudaFree(d_rt));
    CUDA_CHECK(cudaFree(d_codes));
    CUDA_CHECK(cudaFree(d_mag));
    CUDA_CHECK(cudaFree(d_fixed));
    free(h_w);
    free(h_x);
    free(y64);
    free(y32);
    free(codes);
    free(dq);
    free(res);
    free(mag);
    free(fixed);
    free(rt);
    return result < 0 ? report_pass() : result;
}
