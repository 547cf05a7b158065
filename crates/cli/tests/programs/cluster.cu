// Thread-block clusters (sm_90) through inline PTX: distributed shared memory and the
// cluster barrier. Checks its results and prints PASS.
//
// sum_slices, launched with cudaLaunchKernelEx and a cluster of 4 CTAs: CTA rank r of a
// cluster loads slice r of the cluster's 4 x 256 inputs into its shared memory; after a
// cluster barrier, its threads add element e = 64 r + t of all four slices, reading the
// other CTAs' shared memory through mapa and ld.shared::cluster, and every thread adds 1
// to a counter in rank 0's shared memory with atom.shared::cluster; after a second
// barrier rank 0 writes the counter (4 x 256). pairs, launched the same way on a 2 x 4
// grid with clusters of 1 x 2 CTAs: each CTA writes its partner's shared word. (clang-19
// ignores __cluster_dims__, "unknown attribute 'cluster_dims'", so the cluster shape
// comes from the launch.) A cluster of 9 CTAs, above the portable 8, is refused. On a
// GPU below compute capability 9.0 the runtime refuses the first launch.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kThreads = 256;
constexpr int kCluster = 4;

__device__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The .shared::cluster address of `p` (this CTA's shared memory) in CTA `rank`.
__device__ unsigned map_to_rank(const void* p, unsigned rank) {
    unsigned a = (unsigned)__cvta_generic_to_shared(p), d;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(rank));
    return d;
}

__device__ float load_remote(unsigned addr) {
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

__global__ void sum_slices(const float* in, float* out, unsigned* counts) {
    __shared__ float slice[kThreads];
    __shared__ unsigned counter;
    unsigned rank = cluster_rank();
    unsigned cluster = blockIdx.x / kCluster;
    slice[threadIdx.x] = in[blockIdx.x * kThreads + threadIdx.x];
    if (threadIdx.x == 0) counter = 0;
    cluster_sync();
    if (threadIdx.x < kThreads / kCluster) {
        unsigned e = rank * (kThreads / kCluster) + threadIdx.x;
        float sum = 0;
        for (unsigned q = 0; q < kCluster; ++q) sum += load_remote(map_to_rank(&slice[e], q));
        out[cluster * kThreads + e] = sum;
    }
    unsigned old;
    asm volatile("atom.shared::cluster.add.u32 %0, [%1], 1;"
                 : "=r"(old) : "r"(map_to_rank(&counter, 0)) : "memory");
    cluster_sync();
    if (rank == 0 && threadIdx.x == 0) counts[cluster] = counter;
    // No CTA leaves while another may still read its shared memory.
    cluster_sync();
}

__global__ void pairs(unsigned* out) {
    __shared__ unsigned word;
    unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0) word = 100 + b;
    cluster_sync();
    unsigned partner = cluster_rank() ^ 1;
    unsigned v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];"
                 : "=r"(v) : "r"(map_to_rank(&word, partner)) : "memory");
    if (threadIdx.x == 0) out[b] = v;
    cluster_sync();
}

int main() {
    const int clusters = 3, blocks = clusters * kCluster, n = blocks * kThreads;
    static float h_in[n], h_out[clusters * kThreads];
    unsigned h_counts[clusters], h_pairs[8];
    for (int i = 0; i < n; ++i) h_in[i] = (float)(i % 53) * 0.25f;
    float *d_in, *d_out;
    unsigned *d_counts, *d_pairs;
    cudaMalloc(&d_in, sizeof h_in);
    cudaMalloc(&d_out, sizeof h_out);
    cudaMalloc(&d_counts, sizeof h_counts);
    cudaMalloc(&d_pairs, sizeof h_pairs);
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);

    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(kThreads);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = kCluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    if (cudaError_t err = cudaLaunchKernelEx(&config, sum_slices, (const float*)d_in, d_out,
                                             d_counts)) {
        printf("cluster launch refused: %s\n", cudaGetErrorName(err));
        return 1;
    }
    // A cluster of 9 CTAs is above the portable limit of 8.
    cudaLaunchConfig_t big = config;
    cudaLaunchAttribute nine = attr[0];
    nine.val.clusterDim.x = 9;
    big.gridDim = dim3(9);
    big.attrs = &nine;
    cudaError_t too_big =
        cudaLaunchKernelEx(&big, sum_slices, (const float*)d_in, d_out, d_counts);
    cudaLaunchConfig_t pair_config = config;
    cudaLaunchAttribute pair_attr = attr[0];
    pair_attr.val.clusterDim.x = 1;
    pair_attr.val.clusterDim.y = 2;
    pair_config.gridDim = dim3(2, 4);
    pair_config.blockDim = dim3(32);
    pair_config.attrs = &pair_attr;
    if (cudaError_t err = cudaLaunchKernelEx(&pair_config, pairs, d_pairs)) {
        printf("cluster launch refused: %s\n", cudaGetErrorName(err));
        return 1;
    }
    if (cudaError_t err = cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost)) {
        printf("FAILED: %s\n", cudaGetErrorString(err));
        return 1;
    }
    cudaMemcpy(h_counts, d_counts, sizeof h_counts, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_pairs, d_pairs, sizeof h_pairs, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int c = 0; c < clusters; ++c) {
        for (int e = 0; e < kThreads; ++e) {
            float want = 0;
            for (int r = 0; r < kCluster; ++r) want += h_in[(c * kCluster + r) * kThreads + e];
            float got = h_out[c * kThreads + e];
            if (got != want && bad++ < 5) printf("out[%d][%d] = %g, expected %g\n", c, e, got, want);
        }
        if (h_counts[c] != kCluster * kThreads && bad++ < 5)
            printf("count[%d] = %u, expected %d\n", c, h_counts[c], kCluster * kThreads);
    }
    // CTA (x, y) is rank y % 2 of its cluster; its partner is (x, y ^ 1), block b ^ 2.
    for (int b = 0; b < 8; ++b)
        if (h_pairs[b] != 100u + (b ^ 2) && bad++ < 5)
            printf("pairs[%d] = %u, expected %d\n", b, h_pairs[b], 100 + (b ^ 2));
    if (too_big != cudaErrorInvalidClusterSize && bad++ < 5)
        printf("a cluster of 9: %s, expected cudaErrorInvalidClusterSize\n",
               cudaGetErrorName(too_big));
    printf(bad ? "FAILED\n" : "PASS\n");
    return bad ? 1 : 0;
}
