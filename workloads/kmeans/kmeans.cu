// k-means clustering: the device assigns every point to its nearest centroid, the host
// recomputes the centroids from that assignment and uploads them to constant memory
// with cudaMemcpyToSymbol for the next iteration. Every lane of a warp reads the same
// centroid element at the same time, the access pattern constant memory serves best.
// Features are stored feature-major so that the point loads coalesce.
#include "../common/workload.h"

#define FEATURES 8
#define CLUSTERS 16

__constant__ float c_centroids[CLUSTERS * FEATURES];

__global__ void kmeans_assign(const float* __restrict__ features, int n, int* __restrict__ membership) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float point[FEATURES];
#pragma unroll
    for (int f = 0; f < FEATURES; ++f) point[f] = features[f * n + i];

    int best = 0;
    float best_dist = 3.0e38f;
    for (int c = 0; c < CLUSTERS; ++c) {
        float dist = 0.0f;
#pragma unroll
        for (int f = 0; f < FEATURES; ++f) {
            float diff = point[f] - c_centroids[c * FEATURES + f];
            dist += diff * diff;
        }
        if (dist < best_dist) {
            best_dist = dist;
            best = c;
        }
    }
    membership[i] = best;
}

static double host_distance(const float* features, int n, int i, const float* centroids, int c) {
    double dist = 0.0;
    for (int f = 0; f < FEATURES; ++f) {
        double diff = (double)features[f * n + i] - (double)centroids[c * FEATURES + f];
        dist += diff * diff;
    }
    return dist;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 50000 : 3000;
    const int iterations = 3;
    const int threads = 128;

    // Points scattered around CLUSTERS random centres.
    Lcg rng(777u);
    float centres[CLUSTERS * FEATURES];
    for (int i = 0; i < CLUSTERS * FEATURES; ++i) centres[i] = rng.range(-10.0f, 10.0f);
    float* h_features = (float*)malloc(sizeof(float) * FEATURES * n);
    for (int i = 0; i < n; ++i) {
        int c = (int)rng.below(CLUSTERS);
        for (int f = 0; f < FEATURES; ++f) {
            h_features[f * n + i] = centres[c * FEATURES + f] + rng.range(-3.0f, 3.0f);
        }
    }
    // Initial centroids: the first CLUSTERS points.
    float centroids[CLUSTERS * FEATURES];
    for (int c = 0; c < CLUSTERS; ++c) {
        for (int f = 0; f < FEATURES; ++f) centroids[c * FEATURES + f] = h_features[f * n + c];
    }

    float* d_features;
    int* d_membership;
    int* h_membership = (int*)malloc(sizeof(int) * n);
    CUDA_CHECK(cudaMalloc(&d_features, sizeof(float) * FEATURES * n));
    CUDA_CHECK(cudaMalloc(&d_membership, sizeof(int) * n));
    CUDA_CHECK(cudaMemcpy(d_features, h_features, sizeof(float) * FEATURES * n, cudaMemcpyHostToDevice));

    int result = -1;
    for (int it = 0; it < iterations && result < 0; ++it) {
        CUDA_CHECK(cudaMemcpyToSymbol(c_centroids, centroids, sizeof(centroids)));
        CUDA_CHECK(cudaMemset(d_membership, 0xff, sizeof(int) * n));
        kmeans_assign<<<(n + threads - 1) / threads, threads>>>(d_features, n, d_membership);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(h_membership, d_membership, sizeof(int) * n, cudaMemcpyDeviceToHost));

        // Near-ties may legitimately resolve differently in float, so accept any
        // centroid whose exact distance is within rounding of the nearest one.
        for (int i = 0; i < n; ++i) {
            int got = h_membership[i];
            if (got < 0 || got >= CLUSTERS) {
                result = report_fail("iteration %d: point %d assigned to %d", it, i, got);
                break;
            }
            double best = host_distance(h_features, n, i, centroids, 0);
            for (int c = 1; c < CLUSTERS; ++c) {
                double d = host_distance(h_features, n, i, centroids, c);
                if (d < best) best = d;
            }
            double chosen = host_distance(h_features, n, i, centroids, got);
            if (chosen > best * (1.0 + 1e-5) + 1e-5) {
                result = report_fail("iteration %d: point %d assigned to %d at distance %.7g, nearest is %.7g",
                                     it, i, got, chosen, best);
                break;
            }
        }

        // New centroids from the device's assignment; an empty cluster keeps its centroid.
        double sums[CLUSTERS * FEATURES] = {0.0};
        int counts[CLUSTERS] = {0};
        for (int i = 0; i < n; ++i) {
            int c = h_membership[i];
            if (c < 0 || c >= CLUSTERS) continue;
            counts[c]++;
            for (int f = 0; f < FEATURES; ++f) sums[c * FEATURES + f] += h_features[f * n + i];
        }
        for (int c = 0; c < CLUSTERS; ++c) {
            if (counts[c] == 0) continue;
            for (int f = 0; f < FEATURES; ++f) {
                centroids[c * FEATURES + f] = (float)(sums[c * FEATURES + f] / counts[c]);
            }
        }
    }

    CUDA_CHECK(cudaFree(d_features));
    CUDA_CHECK(cudaFree(d_membership));
    free(h_features);
    free(h_membership);
    return result < 0 ? report_pass() : result;
}
