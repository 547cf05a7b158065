// k-nearest neighbours (k = 4) by brute force: one thread per query point, squared
// Euclidean distances to every reference point, the four nearest kept sorted in
// registers. Points are stored as structures (d = 24 floats, 96 bytes, per point) and d
// is a run-time value, so the thread re-reads its own query's coordinates from memory
// for every reference point: a warp's 32 queries span 24 lines that are reused once per
// reference, and the SM's resident warps together need more than a 16 KB L1D and less
// than a 64 KB one (the intra-warp locality that makes k-means-like kernels
// cache-sensitive). The reference points are read by all lanes at once (broadcasts).
#include "../common/workload.h"

#define K 4

__global__ void knn(const float* __restrict__ queries, const float* __restrict__ refs,
                    int nq, int nr, int d, int* __restrict__ nearest,
                    float* __restrict__ nearest_dist) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= nq) return;
    float best[K];
    int best_idx[K];
    for (int s = 0; s < K; ++s) {
        best[s] = 3.0e38f;
        best_idx[s] = -1;
    }
    for (int r = 0; r < nr; ++r) {
        float dist = 0.0f;
        for (int f = 0; f < d; ++f) {
            float diff = queries[q * d + f] - refs[r * d + f];
            dist += diff * diff;
        }
        // Insertion into the sorted list; ties keep the lower reference index first.
        if (dist < best[K - 1]) {
            int s = K - 1;
            while (s > 0 && dist < best[s - 1]) {
                best[s] = best[s - 1];
                best_idx[s] = best_idx[s - 1];
                --s;
            }
            best[s] = dist;
            best_idx[s] = r;
        }
    }
    for (int s = 0; s < K; ++s) {
        nearest[q * K + s] = best_idx[s];
        nearest_dist[q * K + s] = best[s];
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int nq = large ? 32768 + 7 : 4096 + 7;
    int nr = large ? 48 : 12;
    const int d = 24;
    const int threads = 128;

    Lcg rng(9001u);
    float* h_q = (float*)malloc(sizeof(float) * nq * d);
    float* h_r = (float*)malloc(sizeof(float) * nr * d);
    for (int i = 0; i < nq * d; ++i) h_q[i] = rng.unit();
    for (int i = 0; i < nr * d; ++i) h_r[i] = rng.unit();
    int* h_idx = (int*)malloc(sizeof(int) * nq * K);
    float* h_dist = (float*)malloc(sizeof(float) * nq * K);

    float *d_q, *d_r, *d_dist;
    int* d_idx;
    CUDA_CHECK(cudaMalloc(&d_q, sizeof(float) * nq * d));
    CUDA_CHECK(cudaMalloc(&d_r, sizeof(float) * nr * d));
    CUDA_CHECK(cudaMalloc(&d_idx, sizeof(int) * nq * K));
    CUDA_CHECK(cudaMalloc(&d_dist, sizeof(float) * nq * K));
    CUDA_CHECK(cudaMemcpy(d_q, h_q, sizeof(float) * nq * d, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_r, h_r, sizeof(float) * nr * d, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_idx, 0xff, sizeof(int) * nq * K));
    CUDA_CHECK(cudaMemset(d_dist, 0xff, sizeof(float) * nq * K));

    knn<<<(nq + threads - 1) / threads, threads>>>(d_q, d_r, nq, nr, d, d_idx, d_dist);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_idx, d_idx, sizeof(int) * nq * K, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_dist, d_dist, sizeof(float) * nq * K, cudaMemcpyDeviceToHost));

    // Each distance is 24 squared differences of values in [0, 1): its float error is
    // below 27 * 2^-24 * dist < 2e-6 * dist. The check recomputes distances in double and
    // requires: the reported distances match their indices within 4e-6 relative; they are
    // ascending; and no reference outside the list is nearer than the fourth by more than
    // that tolerance (so near-ties may be ordered either way, but a wrong neighbour fails).
    int result = -1;
    double* dist = (double*)malloc(sizeof(double) * nr);
    for (int q = 0; q < nq && result < 0; ++q) {
        for (int r = 0; r < nr; ++r) {
            double s = 0.0;
            for (int f = 0; f < d; ++f) {
                double diff = (double)h_q[q * d + f] - (double)h_r[r * d + f];
                s += diff * diff;
            }
            dist[r] = s;
        }
        for (int s = 0; s < K && result < 0; ++s) {
            int r = h_idx[q * K + s];
            if (r < 0 || r >= nr) {
                result = report_fail("query %d: neighbour %d is %d", q, s, r);
            } else if (!(abs_d(h_dist[q * K + s] - dist[r]) <= 4e-6 * dist[r] + 1e-9)) {
                result = report_fail("query %d: distance to %d is %.7g, expected %.7g", q, r,
                                     (double)h_dist[q * K + s], dist[r]);
            } else if (s > 0 && h_dist[q * K + s] < h_dist[q * K + s - 1]) {
                result = report_fail("query %d: neighbours out of order at %d", q, s);
            }
        }
        if (result >= 0) break;
        double fourth = dist[h_idx[q * K + K - 1]];
        for (int r = 0; r < nr; ++r) {
            bool listed = false;
            for (int s = 0; s < K; ++s) listed = listed || h_idx[q * K + s] == r;
            if (!listed && dist[r] < fourth * (1.0 - 8e-6)) {
                result = report_fail("query %d: reference %d (%.7g) is nearer than the fourth (%.7g)",
                                     q, r, dist[r], fourth);
                break;
            }
        }
    }

    CUDA_CHECK(cudaFree(d_q));
    CUDA_CHECK(cudaFree(d_r));
    CUDA_CHECK(cudaFree(d_idx));
    CUDA_CHECK(cudaFree(d_dist));
    free(h_q);
    free(h_r);
    free(h_idx);
    free(h_dist);
    free(dist);
    return result < 0 ? report_pass() : result;
}
