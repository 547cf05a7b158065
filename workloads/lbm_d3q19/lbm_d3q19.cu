// Lattice Boltzmann (D3Q19, BGK collision) on a periodic box: each thread owns one cell and
// per time step pulls the 19 distributions streaming into it from its neighbours, computes
// density and velocity, relaxes every distribution towards its equilibrium and writes the
// 19 results. Nineteen distributions plus the moments stay live together, so the kernel
// needs many registers per thread; the distributions are stored as 19 planes (structure
// of arrays), so every load and store is coalesced. Two buffers are swapped per step.
#include "../common/workload.h"

#define Q 19
#define THREADS 128

// Direction i of D3Q19: 0 rest, 1-6 the faces, 7-18 the edges. After unrolling, i is a
// constant and the switch folds away.
__host__ __device__ inline void direction(int i, int& x, int& y, int& z) {
    switch (i) {
        case 0: x = 0; y = 0; z = 0; break;
        case 1: x = 1; y = 0; z = 0; break;
        case 2: x = -1; y = 0; z = 0; break;
        case 3: x = 0; y = 1; z = 0; break;
        case 4: x = 0; y = -1; z = 0; break;
        case 5: x = 0; y = 0; z = 1; break;
        case 6: x = 0; y = 0; z = -1; break;
        case 7: x = 1; y = 1; z = 0; break;
        case 8: x = -1; y = -1; z = 0; break;
        case 9: x = 1; y = -1; z = 0; break;
        case 10: x = -1; y = 1; z = 0; break;
        case 11: x = 1; y = 0; z = 1; break;
        case 12: x = -1; y = 0; z = -1; break;
        case 13: x = 1; y = 0; z = -1; break;
        case 14: x = -1; y = 0; z = 1; break;
        case 15: x = 0; y = 1; z = 1; break;
        case 16: x = 0; y = -1; z = -1; break;
        case 17: x = 0; y = 1; z = -1; break;
        default: x = 0; y = -1; z = 1; break;
    }
}

__host__ __device__ inline float weight(int i) {
    return i == 0 ? 1.0f / 3.0f : (i <= 6 ? 1.0f / 18.0f : 1.0f / 36.0f);
}

// nx, ny, nz are powers of two (the host checks), so periodic wrap is a mask.
__global__ void __launch_bounds__(THREADS)
lbm_step(const float* __restrict__ src, float* __restrict__ dst, int log_nx, int log_ny,
         int nz, float omega) {
    int cells = nz << (log_nx + log_ny);
    int cell = blockIdx.x * THREADS + threadIdx.x;
    if (cell >= cells) return;
    int nx = 1 << log_nx, ny = 1 << log_ny;
    int x = cell & (nx - 1);
    int y = (cell >> log_nx) & (ny - 1);
    int z = cell >> (log_nx + log_ny);

    float f[Q];
    float rho = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
#pragma unroll
    for (int i = 0; i < Q; ++i) {
        int ex, ey, ez;
        direction(i, ex, ey, ez);
        int sx = (x - ex) & (nx - 1);
        int sy = (y - ey) & (ny - 1);
        int sz = (z - ez) & (nz - 1);
        f[i] = src[(size_t)i * cells + ((sz << log_ny | sy) << log_nx | sx)];
        rho += f[i];
        ux += ex * f[i];
        uy += ey * f[i];
        uz += ez * f[i];
    }
    float inv = 1.0f / rho;
    ux *= inv;
    uy *= inv;
    uz *= inv;
    float usq = 1.5f * (ux * ux + uy * uy + uz * uz);
#pragma unroll
    for (int i = 0; i < Q; ++i) {
        int ex, ey, ez;
        direction(i, ex, ey, ez);
        float eu = ex * ux + ey * uy + ez * uz;
        float feq = weight(i) * rho * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq);
        dst[(size_t)i * cells + cell] = f[i] + omega * (feq - f[i]);
    }
}

static void reference_step(const double* src, double* dst, int nx, int ny, int nz, double omega) {
    int cells = nx * ny * nz;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x) {
                int cell = (z * ny + y) * nx + x;
                double f[Q], rho = 0, ux = 0, uy = 0, uz = 0;
                for (int i = 0; i < Q; ++i) {
                    int ex, ey, ez;
                    direction(i, ex, ey, ez);
                    int sx = (x - ex + nx) % nx, sy = (y - ey + ny) % ny, sz = (z - ez + nz) % nz;
                    f[i] = src[(size_t)i * cells + (sz * ny + sy) * nx + sx];
                    rho += f[i];
                    ux += ex * f[i];
                    uy += ey * f[i];
                    uz += ez * f[i];
                }
                ux /= rho;
                uy /= rho;
                uz /= rho;
                double usq = 1.5 * (ux * ux + uy * uy + uz * uz);
                for (int i = 0; i < Q; ++i) {
                    int ex, ey, ez;
                    direction(i, ex, ey, ez);
                    double eu = ex * ux + ey * uy + ez * uz;
                    double w = i == 0 ? 1.0 / 3.0 : (i <= 6 ? 1.0 / 18.0 : 1.0 / 36.0);
                    double feq = w * rho * (1.0 + 3.0 * eu + 4.5 * eu * eu - usq);
                    dst[(size_t)i * cells + cell] = f[i] + omega * (feq - f[i]);
                }
            }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int log_nx = large ? 6 : 5, log_ny = large ? 6 : 5;
    int nz = large ? 32 : 8;
    int steps = large ? 6 : 2;
    int nx = 1 << log_nx, ny = 1 << log_ny;
    int cells = nx * ny * nz;
    const float omega = 1.0f / 0.8f;

    size_t n = (size_t)Q * cells;
    float* h_f = (float*)malloc(sizeof(float) * n);
    double* ref_a = (double*)malloc(sizeof(double) * n);
    double* ref_b = (double*)malloc(sizeof(double) * n);
    // Equilibrium at rest perturbed by up to 10% per distribution, so that a distribution
    // streamed from the wrong neighbour changes the result by about 1e-3.
    Lcg rng(1919u);
    for (int i = 0; i < Q; ++i)
        for (int c = 0; c < cells; ++c) {
            float v = weight(i) * rng.range(0.9f, 1.1f);
            h_f[(size_t)i * cells + c] = v;
            ref_a[(size_t)i * cells + c] = v;
        }

    float *d_a, *d_b;
    CUDA_CHECK(cudaMalloc(&d_a, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_b, sizeof(float) * n));
    CUDA_CHECK(cudaMemcpy(d_a, h_f, sizeof(float) * n, cudaMemcpyHostToDevice));
    int blocks = (cells + THREADS - 1) / THREADS;
    for (int s = 0; s < steps; ++s) {
        lbm_step<<<blocks, THREADS>>>(d_a, d_b, log_nx, log_ny, nz, omega);
        CUDA_CHECK_LAUNCH();
        float* t = d_a;
        d_a = d_b;
        d_b = t;
        reference_step(ref_a, ref_b, nx, ny, nz, (double)omega);
        double* r = ref_a;
        ref_a = ref_b;
        ref_b = r;
    }
    CUDA_CHECK(cudaMemcpy(h_f, d_a, sizeof(float) * n, cudaMemcpyDeviceToHost));

    // Each step is a few dozen float operations on values of order 0.1 (density about 1),
    // so it adds a few 1e-7 of error; 2e-6 per step is a safe bound, far below the 1e-3
    // a wrong neighbour makes.
    double tol = 2e-6 * steps;
    int result = -1;
    for (size_t k = 0; k < n; ++k) {
        if (!(abs_d(h_f[k] - ref_a[k]) <= tol)) {
            result = report_fail("f[%zu][%zu] = %.7g, expected %.7g", k / cells, k % cells,
                                 h_f[k], ref_a[k]);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    free(h_f);
    free(ref_a);
    free(ref_b);
    return result < 0 ? report_pass() : result;
}
