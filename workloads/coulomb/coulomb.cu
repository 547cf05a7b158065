// Direct Coulomb summation: the electrostatic potential on a 2D slice of a lattice, the sum
// over all atoms of q / r. Atoms (x, y, z, q) sit in __constant__ memory and every lane
// reads the same atom, so the loop is a long run of 32-bit arithmetic with no global
// loads: each thread computes four lattice points one CTA width apart along x, sharing
// dy^2 + dz^2 between them, with the atom loop unrolled twice (rsqrtf, 4 FFMAs and 3 FMULs
// per point and atom).
//
// The host checks every point against a double-precision sum with rsqrt's error bound.
#include "../common/workload.h"

#define MAX_ATOMS 1024
#define THREADS_X 64
#define POINTS_PER_THREAD 4

__constant__ float4 atoms[MAX_ATOMS];

__global__ void __launch_bounds__(THREADS_X)
coulomb(float* __restrict__ potential, int nx, int ny, int natoms, float spacing, float z) {
    int y = blockIdx.y;
    int x0 = blockIdx.x * THREADS_X * POINTS_PER_THREAD + threadIdx.x;
    float py = spacing * y;
    float px[POINTS_PER_THREAD];
    float e[POINTS_PER_THREAD];
#pragma unroll
    for (int i = 0; i < POINTS_PER_THREAD; ++i) {
        px[i] = spacing * (x0 + i * THREADS_X);
        e[i] = 0.0f;
    }
#pragma unroll 2
    for (int a = 0; a < natoms; ++a) {
        float4 atom = atoms[a];
        float dy = py - atom.y;
        float dz = z - atom.z;
        float dyz2 = fmaf(dy, dy, dz * dz);
#pragma unroll
        for (int i = 0; i < POINTS_PER_THREAD; ++i) {
            float dx = px[i] - atom.x;
            e[i] = fmaf(atom.w, rsqrtf(fmaf(dx, dx, dyz2)), e[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < POINTS_PER_THREAD; ++i) {
        int x = x0 + i * THREADS_X;
        if (x < nx) potential[(size_t)y * nx + x] = e[i];
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int nx = large ? 512 : 200;
    int ny = large ? 256 : 48;
    int natoms = large ? 1024 : 160;
    const float spacing = 0.1f;
    const float z = 0.35f;

    float4* h_atoms = (float4*)malloc(sizeof(float4) * natoms);
    Lcg rng(9001u);
    float extent_x = spacing * nx, extent_y = spacing * ny;
    for (int a = 0; a < natoms; ++a) {
        h_atoms[a].x = rng.range(0.0f, extent_x);
        h_atoms[a].y = rng.range(0.0f, extent_y);
        // Off the slice by at least 0.5, so every distance is at least 0.5.
        h_atoms[a].z = rng.range(0.85f, 4.0f) * (rng.below(2) ? 1.0f : -1.0f) + z;
        h_atoms[a].w = rng.range(-2.0f, 2.0f);
    }
    float* h_pot = (float*)malloc(sizeof(float) * nx * ny);
    float* d_pot;
    CUDA_CHECK(cudaMalloc(&d_pot, sizeof(float) * nx * ny));
    CUDA_CHECK(cudaMemset(d_pot, 0, sizeof(float) * nx * ny));
    CUDA_CHECK(cudaMemcpyToSymbol(atoms, h_atoms, sizeof(float4) * natoms));

    int per_cta = THREADS_X * POINTS_PER_THREAD;
    dim3 grid((nx + per_cta - 1) / per_cta, ny);
    coulomb<<<grid, THREADS_X>>>(d_pot, nx, ny, natoms, spacing, z);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_pot, d_pot, sizeof(float) * nx * ny, cudaMemcpyDeviceToHost));

    // rsqrtf errs by at most 2 ulp (2^-22 relative) and the distance by a few ulp of its
    // inputs (which reach 25 for the large size, so about 1e-6 relative of r^2 ... taken
    // as 2e-6); each term is then within about 3e-6 relative and the float sum adds
    // natoms * 2^-24 relative of sum |q / r|. Tolerance: (3e-6 + natoms * 1.2e-7) * sum|q/r|.
    int result = -1;
    for (int y = 0; y < ny && result < 0; ++y) {
        for (int x = 0; x < nx; ++x) {
            double ref = 0.0, mag = 0.0;
            float px = spacing * x, py = spacing * y;
            for (int a = 0; a < natoms; ++a) {
                double dx = (double)px - h_atoms[a].x;
                double dy = (double)py - h_atoms[a].y;
                double dz = (double)z - h_atoms[a].z;
                double term = h_atoms[a].w / sqrt(dx * dx + dy * dy + dz * dz);
                ref += term;
                mag += abs_d(term);
            }
            double got = h_pot[y * nx + x];
            if (abs_d(got - ref) > (3e-6 + natoms * 1.2e-7) * mag + 1e-6) {
                result = report_fail("potential[%d][%d] = %.7g, expected %.7g", y, x, got, ref);
                break;
            }
        }
    }

    CUDA_CHECK(cudaFree(d_pot));
    free(h_atoms);
    free(h_pot);
    return result < 0 ? report_pass() : result;
}
