// Thread-block clusters from __cluster_dims__ (nvcc 11.8, sm_90): the kernel attribute,
// not the launch, gives the cluster shape. nvcc emits `.explicitcluster` and
// `.reqnctapercluster X, Y, Z` for it (clang-19 ignores the attribute). Checks its results
// and prints PASS.
//
// ranks (__cluster_dims__(2, 2, 1), a plain <<<(4, 4), 64>>> launch): every CTA writes
// its %cluster_ctarank, %cluster_nctarank, %clusterid.x/y and %cluster_ctaid.x/y, and
// reads the word its x-partner (rank ^ 1) wrote into its own shared memory (mapa and
// ld.shared::cluster), so the result says the shape came from the kernel. A launch of
// ranks on a 3 x 4 grid (not a whole number of 2 x 2 clusters) is refused with
// cudaErrorInvalidClusterSize, as CUDA refuses it. On a GPU below compute capability 9.0
// the first launch is refused.
#include <cstdio>
#include <cuda_runtime.h>

__device__ unsigned sreg_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ unsigned sreg_nrank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}
__device__ unsigned sreg_clusterid_x() {
    unsigned r;
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
    return r;
}
__device__ unsigned sreg_clusterid_y() {
    unsigned r;
    asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(r));
    return r;
}
__device__ unsigned sreg_cluster_ctaid_x() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(r));
    return r;
}
__device__ unsigned sreg_cluster_ctaid_y() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(r));
    return r;
}
__device__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.aligned;\n\t"
                 "barrier.cluster.wait.aligned;" ::: "memory");
}

__global__ void __cluster_dims__(2, 2, 1) ranks(unsigned* out) {
    __shared__ unsigned word;
    unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned rank = sreg_rank();
    if (threadIdx.x == 0) word = 1000 + b;
    cluster_sync();
    unsigned a = (unsigned)__cvta_generic_to_shared(&word), remote, partner;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(a), "r"(rank ^ 1));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(partner) : "r"(remote) : "memory");
    if (threadIdx.x == 0) {
        unsigned* o = out + 7 * b;
        o[0] = rank;
        o[1] = sreg_nrank();
        o[2] = sreg_clusterid_x();
        o[3] = sreg_clusterid_y();
        o[4] = sreg_cluster_ctaid_x();
        o[5] = sreg_cluster_ctaid_y();
        o[6] = partner;
    }
    cluster_sync();
}

int main() {
    const int gx = 4, gy = 4, blocks = gx * gy;
    unsigned h[7 * blocks];
    unsigned* d;
    cudaMalloc(&d, sizeof h);
    cudaMemset(d, 0xff, sizeof h);
    ranks<<<dim3(gx, gy), 64>>>(d);
    if (cudaError_t err = cudaGetLastError()) {
        printf("cluster launch refused: %s\n", cudaGetErrorName(err));
        return 1;
    }
    if (cudaError_t err = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost)) {
        printf("FAILED: %s\n", cudaGetErrorString(err));
        return 1;
    }
    int bad = 0;
    for (int y = 0; y < gy; ++y)
        for (int x = 0; x < gx; ++x) {
            int b = y * gx + x;
            // A 2 x 2 cluster ranks its CTAs x-fastest: rank = (y % 2) * 2 + x % 2.
            unsigned rank = (y % 2) * 2 + x % 2;
            int px = x ^ 1, partner = y * gx + px;
            unsigned want[7] = {rank, 4, (unsigned)x / 2, (unsigned)y / 2,
                                (unsigned)x % 2, (unsigned)y % 2, 1000u + partner};
            for (int i = 0; i < 7; ++i)
                if (h[7 * b + i] != want[i] && bad++ < 8)
                    printf("CTA (%d,%d) word %d = %u, expected %u\n", x, y, i, h[7 * b + i],
                           want[i]);
        }
    ranks<<<dim3(3, 4), 64>>>(d);
    cudaError_t partial = cudaGetLastError();
    if (partial != cudaErrorInvalidClusterSize && bad++ < 8)
        printf("a 3 x 4 grid of 2 x 2 clusters: %s, expected cudaErrorInvalidClusterSize\n",
               cudaGetErrorName(partial));
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad ? 1 : 0;
}
