// PageRank by pulling: the graph's incoming edges in CSR form, one thread per vertex
// summing the contributions rank[u] / outdeg[u] of its in-neighbours u, then a damping
// step; one launch per iteration, ping-ponging two rank arrays. The gathers from the
// contribution array (8,192 vertices: 32 KB) are irregular and reused by every vertex
// that shares an in-neighbour: a working set larger than a 16 KB L1D and smaller than a
// 64 KB one, which is what makes a kernel cache-sensitive.
#include "../common/workload.h"

// contrib[u] = rank[u] / outdeg[u] (0 for a vertex without out-edges).
__global__ void contributions(const float* __restrict__ rank, const int* __restrict__ outdeg,
                              float* __restrict__ contrib, int n) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int d = outdeg[v];
    contrib[v] = d > 0 ? rank[v] / (float)d : 0.0f;
}

__global__ void pagerank_pull(const int* __restrict__ in_start, const int* __restrict__ in_src,
                              const float* __restrict__ contrib, float* __restrict__ rank,
                              int n, float damping) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    float sum = 0.0f;
    for (int e = in_start[v]; e < in_start[v + 1]; ++e) sum += contrib[in_src[e]];
    rank[v] = (1.0f - damping) / (float)n + damping * sum;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 131072 : 8192;
    int iterations = large ? 12 : 4;
    const float damping = 0.85f;
    const int threads = 128;

    // In-degrees 2..13; sources drawn so that a quarter of the edges come from a
    // 1,024-vertex "hub" range (skew, as in real graphs) and the rest uniformly.
    Lcg rng(2718u);
    int* h_in_start = (int*)malloc(sizeof(int) * (n + 1));
    h_in_start[0] = 0;
    for (int v = 0; v < n; ++v) h_in_start[v + 1] = h_in_start[v] + 2 + (int)rng.below(12);
    int m = h_in_start[n];
    int* h_in_src = (int*)malloc(sizeof(int) * m);
    int* h_outdeg = (int*)calloc(n, sizeof(int));
    for (int e = 0; e < m; ++e) {
        int u = rng.below(4) == 0 ? (int)rng.below(1024) : (int)rng.below(n);
        h_in_src[e] = u;
        h_outdeg[u] += 1;
    }
    float* h_rank = (float*)malloc(sizeof(float) * n);
    for (int v = 0; v < n; ++v) h_rank[v] = 1.0f / (float)n;

    int *d_in_start, *d_in_src, *d_outdeg;
    float *d_rank, *d_contrib;
    CUDA_CHECK(cudaMalloc(&d_in_start, sizeof(int) * (n + 1)));
    CUDA_CHECK(cudaMalloc(&d_in_src, sizeof(int) * m));
    CUDA_CHECK(cudaMalloc(&d_outdeg, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_rank, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_contrib, sizeof(float) * n));
    CUDA_CHECK(cudaMemcpy(d_in_start, h_in_start, sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_in_src, h_in_src, sizeof(int) * m, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_outdeg, h_outdeg, sizeof(int) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_rank, h_rank, sizeof(float) * n, cudaMemcpyHostToDevice));

    int blocks = (n + threads - 1) / threads;
    for (int it = 0; it < iterations; ++it) {
        contributions<<<blocks, threads>>>(d_rank, d_outdeg, d_contrib, n);
        CUDA_CHECK_LAUNCH();
        pagerank_pull<<<blocks, threads>>>(d_in_start, d_in_src, d_contrib, d_rank, n, damping);
        CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaMemcpy(h_rank, d_rank, sizeof(float) * n, cudaMemcpyDeviceToHost));

    // The reference iterates in double. Per iteration each rank picks up a relative error
    // of at most about (14 + 3) * 2^-24 from its sum and division; the iteration is a
    // contraction (factor 0.85), so the accumulated error stays below
    // 17 * 2^-24 / 0.15 < 7e-6 of the largest rank; the check allows 2e-5 of it.
    double* ref = (double*)malloc(sizeof(double) * n);
    double* con = (double*)malloc(sizeof(double) * n);
    for (int v = 0; v < n; ++v) ref[v] = 1.0 / n;
    for (int it = 0; it < iterations; ++it) {
        for (int u = 0; u < n; ++u) con[u] = h_outdeg[u] > 0 ? ref[u] / h_outdeg[u] : 0.0;
        for (int v = 0; v < n; ++v) {
            double s = 0.0;
            for (int e = h_in_start[v]; e < h_in_start[v + 1]; ++e) s += con[h_in_src[e]];
            ref[v] = (1.0 - damping) / n + damping * s;
        }
    }
    double largest = 0.0;
    for (int v = 0; v < n; ++v) largest = ref[v] > largest ? ref[v] : largest;
    int result = -1;
    for (int v = 0; v < n; ++v) {
        if (!(abs_d(h_rank[v] - ref[v]) <= 2e-5 * largest)) {
            result = report_fail("rank[%d] = %.7g, expected %.7g", v, h_rank[v], ref[v]);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_in_start));
    CUDA_CHECK(cudaFree(d_in_src));
    CUDA_CHECK(cudaFree(d_outdeg));
    CUDA_CHECK(cudaFree(d_rank));
    CUDA_CHECK(cudaFree(d_contrib));
    free(h_in_start);
    free(h_in_src);
    free(h_outdeg);
    free(h_rank);
    free(ref);
    free(con);
    return result < 0 ? report_pass() : result;
}
