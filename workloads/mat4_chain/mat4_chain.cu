// Composition of 4x4 transforms: each thread multiplies its own matrix by a cycle of four
// rotation matrices, over and over (the pose updates of many independent bodies). All
// five matrices stay in registers (80 values), and each product is 64 FFMAs/FMULs whose
// sources are registers, in four independent chains per output row.
//
// The rotations keep the values bounded. mul4 is shared with the host, which evaluates
// the same fmaf sequence (one rounding per step, as the device's FFMA), so the check is
// exact.
#include "../common/workload.h"

#define THREADS 128
#define CYCLE 4

struct Mat4 {
    float m[4][4];
};

__host__ __device__ inline Mat4 mul4(const Mat4& a, const Mat4& b) {
    Mat4 r;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            float s = a.m[i][0] * b.m[0][j];
            s = fmaf(a.m[i][1], b.m[1][j], s);
            s = fmaf(a.m[i][2], b.m[2][j], s);
            r.m[i][j] = fmaf(a.m[i][3], b.m[3][j], s);
        }
    }
    return r;
}

__global__ void __launch_bounds__(THREADS)
mat4_chain(const Mat4* __restrict__ start, const Mat4* __restrict__ steps, Mat4* __restrict__ out,
           int n, int rounds) {
    int t = blockIdx.x * THREADS + threadIdx.x;
    if (t >= n) return;
    Mat4 a = start[t];
    Mat4 r[CYCLE];
    // Each thread uses one of 32 step cycles.
#pragma unroll
    for (int c = 0; c < CYCLE; ++c) r[c] = steps[(t % 32) * CYCLE + c];
    for (int k = 0; k < rounds; ++k) {
#pragma unroll
        for (int c = 0; c < CYCLE; ++c) a = mul4(a, r[c]);
    }
    out[t] = a;
}

// A rotation about a random axis pair (i, j) by a random angle, composed three times.
static Mat4 random_rotation(Lcg& rng) {
    Mat4 m = {};
    for (int i = 0; i < 4; ++i) m.m[i][i] = 1.0f;
    for (int k = 0; k < 3; ++k) {
        int i = (int)rng.below(4), j = (i + 1 + (int)rng.below(3)) % 4;
        float th = rng.range(-3.0f, 3.0f);
        Mat4 g = {};
        for (int d = 0; d < 4; ++d) g.m[d][d] = 1.0f;
        g.m[i][i] = cosf(th);
        g.m[j][j] = cosf(th);
        g.m[i][j] = -sinf(th);
        g.m[j][i] = sinf(th);
        Mat4 p = {};
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b)
                for (int c = 0; c < 4; ++c) p.m[a][b] += m.m[a][c] * g.m[c][b];
        m = p;
    }
    return m;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 32768 : 4096;
    int rounds = large ? 32 : 12;

    Mat4* h_start = (Mat4*)malloc(sizeof(Mat4) * n);
    Mat4* h_out = (Mat4*)malloc(sizeof(Mat4) * n);
    Mat4 h_steps[32 * CYCLE];
    Lcg rng(44u);
    for (int i = 0; i < n; ++i)
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) h_start[i].m[a][b] = rng.range(-1.0f, 1.0f);
    for (int i = 0; i < 32 * CYCLE; ++i) h_steps[i] = random_rotation(rng);

    Mat4 *d_start, *d_steps, *d_out;
    CUDA_CHECK(cudaMalloc(&d_start, sizeof(Mat4) * n));
    CUDA_CHECK(cudaMalloc(&d_steps, sizeof(h_steps)));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(Mat4) * n));
    CUDA_CHECK(cudaMemcpy(d_start, h_start, sizeof(Mat4) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_steps, h_steps, sizeof(h_steps), cudaMemcpyHostToDevice));
    mat4_chain<<<(n + THREADS - 1) / THREADS, THREADS>>>(d_start, d_steps, d_out, n, rounds);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_out, d_out, sizeof(Mat4) * n, cudaMemcpyDeviceToHost));

    int result = -1;
    for (int t = 0; t < n && result < 0; ++t) {
        Mat4 a = h_start[t];
        for (int k = 0; k < rounds; ++k)
            for (int c = 0; c < CYCLE; ++c) a = mul4(a, h_steps[(t % 32) * CYCLE + c]);
        if (memcmp(&a, &h_out[t], sizeof(Mat4)) != 0) {
            result = report_fail("matrix %d: [0][0] = %.9g, expected %.9g", t, h_out[t].m[0][0],
                                 a.m[0][0]);
        }
    }
    CUDA_CHECK(cudaFree(d_start));
    CUDA_CHECK(cudaFree(d_steps));
    CUDA_CHECK(cudaFree(d_out));
    free(h_start);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
