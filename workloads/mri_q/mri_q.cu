// The Q matrix of non-Cartesian MRI reconstruction: for every voxel r and every k-space
// sample (k, |phi|^2), Q(r) = sum_k |phi_k|^2 exp(i 2 pi k . r). Samples sit in
// __constant__ memory (every lane reads the same one); each thread computes two voxels
// half the grid apart and the sample loop is unrolled four times, so a long run of 32-bit
// arithmetic (three FFMAs for the phase, __sinf/__cosf, two FFMAs per voxel and sample)
// keeps many values live at once.
//
// Coordinates lie in [-0.5, 0.5) and k in [-0.3, 0.3), so the phase stays within
// [-2.6 pi / 3, 2.6 pi / 3] where __sinf and __cosf are accurate to 2^-21.
#include "../common/workload.h"

#define MAX_SAMPLES 1024
#define THREADS 128
#define TWO_PI 6.2831853071795864769f

struct Sample {
    float kx, ky, kz, mag;
};
__constant__ Sample samples[MAX_SAMPLES];

__global__ void __launch_bounds__(THREADS)
mri_q(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
      float* __restrict__ q_re, float* __restrict__ q_im, int half, int nsamples) {
    int v = blockIdx.x * THREADS + threadIdx.x;
    if (v >= half) return;
    float x0 = TWO_PI * x[v], y0 = TWO_PI * y[v], z0 = TWO_PI * z[v];
    float x1 = TWO_PI * x[v + half], y1 = TWO_PI * y[v + half], z1 = TWO_PI * z[v + half];
    float re0 = 0.0f, im0 = 0.0f, re1 = 0.0f, im1 = 0.0f;
#pragma unroll 4
    for (int s = 0; s < nsamples; ++s) {
        Sample k = samples[s];
        float arg0 = fmaf(k.kx, x0, fmaf(k.ky, y0, k.kz * z0));
        float arg1 = fmaf(k.kx, x1, fmaf(k.ky, y1, k.kz * z1));
        re0 = fmaf(k.mag, __cosf(arg0), re0);
        im0 = fmaf(k.mag, __sinf(arg0), im0);
        re1 = fmaf(k.mag, __cosf(arg1), re1);
        im1 = fmaf(k.mag, __sinf(arg1), im1);
    }
    q_re[v] = re0;
    q_im[v] = im0;
    q_re[v + half] = re1;
    q_im[v + half] = im1;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int voxels = large ? 32768 : 4096;
    int nsamples = large ? 1024 : 128;
    int half = voxels / 2;

    Sample* h_s = (Sample*)malloc(sizeof(Sample) * nsamples);
    Lcg rng(314159u);
    for (int s = 0; s < nsamples; ++s) {
        h_s[s].kx = rng.range(-0.3f, 0.3f);
        h_s[s].ky = rng.range(-0.3f, 0.3f);
        h_s[s].kz = rng.range(-0.3f, 0.3f);
        h_s[s].mag = rng.range(0.0f, 1.0f);
    }
    size_t bytes = sizeof(float) * voxels;
    float* h_x = (float*)malloc(bytes);
    float* h_y = (float*)malloc(bytes);
    float* h_z = (float*)malloc(bytes);
    float* h_re = (float*)malloc(bytes);
    float* h_im = (float*)malloc(bytes);
    for (int v = 0; v < voxels; ++v) {
        h_x[v] = rng.range(-0.5f, 0.5f);
        h_y[v] = rng.range(-0.5f, 0.5f);
        h_z[v] = rng.range(-0.5f, 0.5f);
    }

    float *d_x, *d_y, *d_z, *d_re, *d_im;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));
    CUDA_CHECK(cudaMalloc(&d_z, bytes));
    CUDA_CHECK(cudaMalloc(&d_re, bytes));
    CUDA_CHECK(cudaMalloc(&d_im, bytes));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, h_y, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_z, h_z, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(samples, h_s, sizeof(Sample) * nsamples));

    mri_q<<<(half + THREADS - 1) / THREADS, THREADS>>>(d_x, d_y, d_z, d_re, d_im, half, nsamples);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_re, d_re, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_im, d_im, bytes, cudaMemcpyDeviceToHost));

    // Per term: the phase errs by a few ulp of 2 pi * 0.45 (about 1e-6 absolute), __sinf
    // and __cosf by 2^-21.4; the term (|phi|^2 <= 1) by about 2e-6, the float sum by
    // nsamples * 2^-24 of sum |phi|^2. Tolerance: (3e-6 + nsamples * 1.2e-7) * sum |phi|^2.
    double mag = 0.0;
    for (int s = 0; s < nsamples; ++s) mag += h_s[s].mag;
    double tol = (3e-6 + nsamples * 1.2e-7) * mag;
    int result = -1;
    for (int v = 0; v < voxels; ++v) {
        double re = 0.0, im = 0.0;
        for (int s = 0; s < nsamples; ++s) {
            double arg = 2.0 * M_PI *
                         ((double)h_s[s].kx * h_x[v] + (double)h_s[s].ky * h_y[v] +
                          (double)h_s[s].kz * h_z[v]);
            re += h_s[s].mag * cos(arg);
            im += h_s[s].mag * sin(arg);
        }
        if (abs_d(h_re[v] - re) > tol || abs_d(h_im[v] - im) > tol) {
            result = report_fail("Q[%d] = (%.7g, %.7g), expected (%.7g, %.7g)", v, h_re[v],
                                 h_im[v], re, im);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_z));
    CUDA_CHECK(cudaFree(d_re));
    CUDA_CHECK(cudaFree(d_im));
    free(h_s);
    free(h_x);
    free(h_y);
    free(h_z);
    free(h_re);
    free(h_im);
    return result < 0 ? report_pass() : result;
}
