// One step of an all-pairs gravitational n-body simulation. Each thread owns one body;
// the CTA stages the other bodies through shared memory one tile at a time and the
// partially unrolled interaction loop (rsqrtf, a dozen FMAs) keeps many values live.
// Body count is not a multiple of the tile: padding bodies have zero mass.
#include "../common/workload.h"

#define TILE 128

__global__ void nbody_step(const float4* __restrict__ pos, const float4* __restrict__ vel,
                           float4* __restrict__ new_pos, float4* __restrict__ new_vel, int n,
                           float dt, float softening2) {
    __shared__ float4 tile[TILE];
    int i = blockIdx.x * TILE + threadIdx.x;
    float4 p = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;

    for (int base = 0; base < n; base += TILE) {
        int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) {
            float4 q = tile[k];
            float dx = q.x - p.x;
            float dy = q.y - p.y;
            float dz = q.z - p.z;
            // Softening keeps the self-interaction (d = 0) finite and zero.
            float r2 = dx * dx + dy * dy + dz * dz + softening2;
            float inv_r = rsqrtf(r2);
            float s = q.w * inv_r * inv_r * inv_r;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }

    if (i < n) {
        float4 v = vel[i];
        v.x += ax * dt;
        v.y += ay * dt;
        v.z += az * dt;
        new_vel[i] = v;
        new_pos[i] = make_float4(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w);
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 2000 : 500;
    const float dt = 0.01f;
    const float softening2 = 0.01f;

    float4* h_pos = (float4*)malloc(sizeof(float4) * n);
    float4* h_vel = (float4*)malloc(sizeof(float4) * n);
    float4* h_new_pos = (float4*)malloc(sizeof(float4) * n);
    float4* h_new_vel = (float4*)malloc(sizeof(float4) * n);
    Lcg rng(2718u);
    for (int i = 0; i < n; ++i) {
        h_pos[i].x = rng.range(-1.0f, 1.0f);
        h_pos[i].y = rng.range(-1.0f, 1.0f);
        h_pos[i].z = rng.range(-1.0f, 1.0f);
        h_pos[i].w = rng.range(0.5f, 1.5f);
        h_vel[i].x = rng.range(-0.1f, 0.1f);
        h_vel[i].y = rng.range(-0.1f, 0.1f);
        h_vel[i].z = rng.range(-0.1f, 0.1f);
        h_vel[i].w = 0.0f;
    }

    float4 *d_pos, *d_vel, *d_new_pos, *d_new_vel;
    CUDA_CHECK(cudaMalloc(&d_pos, sizeof(float4) * n));
    CUDA_CHECK(cudaMalloc(&d_vel, sizeof(float4) * n));
    CUDA_CHECK(cudaMalloc(&d_new_pos, sizeof(float4) * n));
    CUDA_CHECK(cudaMalloc(&d_new_vel, sizeof(float4) * n));
    CUDA_CHECK(cudaMemcpy(d_pos, h_pos, sizeof(float4) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_vel, h_vel, sizeof(float4) * n, cudaMemcpyHostToDevice));

    nbody_step<<<(n + TILE - 1) / TILE, TILE>>>(d_pos, d_vel, d_new_pos, d_new_vel, n, dt, softening2);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_new_pos, d_new_pos, sizeof(float4) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_new_vel, d_new_vel, sizeof(float4) * n, cudaMemcpyDeviceToHost));

    // The acceleration is a sum of n terms, each with a relative error of a few ulps
    // (rsqrtf is approximate); the sum adds at most n * 2^-24 of the magnitude sum.
    double acc_rel = 2.0 * (n * 5.96e-8 + 4e-6);
    int result = -1;
    for (int i = 0; i < n && result < 0; ++i) {
        double p[3] = {h_pos[i].x, h_pos[i].y, h_pos[i].z};
        double a[3] = {0.0, 0.0, 0.0};
        double scale = 0.0;  // sum of |term| over all components
        for (int j = 0; j < n; ++j) {
            double d[3] = {h_pos[j].x - p[0], h_pos[j].y - p[1], h_pos[j].z - p[2]};
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + (double)softening2;
            double s = h_pos[j].w / (r2 * sqrt(r2));
            for (int c = 0; c < 3; ++c) {
                a[c] += d[c] * s;
                scale += abs_d(d[c] * s);
            }
        }
        double v_old[3] = {h_vel[i].x, h_vel[i].y, h_vel[i].z};
        double v_got[3] = {h_new_vel[i].x, h_new_vel[i].y, h_new_vel[i].z};
        double p_got[3] = {h_new_pos[i].x, h_new_pos[i].y, h_new_pos[i].z};
        for (int c = 0; c < 3; ++c) {
            double v_ref = v_old[c] + a[c] * dt;
            double p_ref = p[c] + v_ref * dt;
            double v_tol = dt * acc_rel * scale + 3e-7 * (abs_d(v_old[c]) + dt * scale);
            double p_tol = dt * v_tol + 3e-7 * (abs_d(p[c]) + dt * (abs_d(v_old[c]) + dt * scale));
            if (abs_d(v_got[c] - v_ref) > v_tol) {
                result = report_fail("body %d velocity[%d] = %.9g, expected %.9g", i, c, v_got[c], v_ref);
                break;
            }
            if (abs_d(p_got[c] - p_ref) > p_tol) {
                result = report_fail("body %d position[%d] = %.9g, expected %.9g", i, c, p_got[c], p_ref);
                break;
            }
        }
        if (result < 0 && h_new_pos[i].w != h_pos[i].w) {
            result = report_fail("body %d mass changed", i);
        }
    }

    CUDA_CHECK(cudaFree(d_pos));
    CUDA_CHECK(cudaFree(d_vel));
    CUDA_CHECK(cudaFree(d_new_pos));
    CUDA_CHECK(cudaFree(d_new_vel));
    free(h_pos);
    free(h_vel);
    free(h_new_pos);
    free(h_new_vel);
    return result < 0 ? report_pass() : result;
}
