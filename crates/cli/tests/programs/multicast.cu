// Bulk copies across a thread-block cluster (sm_90) through inline PTX. Checks its
// results and prints PASS.
//
// spread, launched with cudaLaunchKernelEx on 3 clusters of 4 CTAs of 128 threads: every
// CTA initialises two mbarriers and expects 1 KB on each. Thread 0 of rank 0 copies the
// cluster's 256 floats from global memory into the `tile` of all four CTAs with one
// cp.async.bulk...multicast::cluster (ctaMask 0xf); every CTA waits on its first
// mbarrier, writes tile[i] to seen[256 b + i] and (rank + 1) tile[i] to `scaled`, and
// thread 0 copies `scaled` into the next rank's `recv` with
// cp.async.bulk.shared::cluster.shared::cta, completing on that rank's second mbarrier
// (both addresses through mapa). Each CTA waits on its second mbarrier and writes recv[i]
// to got[256 b + i]: (prev + 1) in[i] with prev the previous rank.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kThreads = 128;
constexpr int kCluster = 4;
constexpr int kWords = 256;
constexpr unsigned kBytes = kWords * 4;

__device__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ unsigned map_to_rank(const void* p, unsigned rank) {
    unsigned d;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(smem(p)), "r"(rank));
    return d;
}

__device__ void wait_phase0(const unsigned long long* bar) {
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(smem(bar)) : "memory");
    }
}

__global__ void spread(const float* in, float* seen, float* got) {
    alignas(128) __shared__ float tile[kWords];
    alignas(16) __shared__ float scaled[kWords];
    alignas(16) __shared__ float recv[kWords];
    alignas(8) __shared__ unsigned long long bars[2];
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    unsigned cluster = blockIdx.x / kCluster;
    if (threadIdx.x == 0) {
        for (int i = 0; i < 2; ++i) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&bars[i])));
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                         :: "r"(smem(&bars[i])), "r"(kBytes) : "memory");
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_sync();
    if (rank == 0 && threadIdx.x == 0) {
        unsigned short mask = 0xf;
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            " [%0], [%1], %2, [%3], %4;"
            :: "r"(smem(tile)), "l"(in + cluster * kWords), "r"(kBytes), "r"(smem(&bars[0])),
               "h"(mask) : "memory");
    }
    wait_phase0(&bars[0]);
    for (int i = threadIdx.x; i < kWords; i += kThreads) {
        seen[blockIdx.x * kWords + i] = tile[i];
        scaled[i] = (float)(rank + 1) * tile[i];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned next = (rank + 1) % kCluster;
        asm volatile(
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"
            " [%0], [%1], %2, [%3];"
            :: "r"(map_to_rank(recv, next)), "r"(smem(scaled)), "r"(kBytes),
               "r"(map_to_rank(&bars[1], next)) : "memory");
    }
    wait_phase0(&bars[1]);
    for (int i = threadIdx.x; i < kWords; i += kThreads) got[blockIdx.x * kWords + i] = recv[i];
    // No CTA leaves while a copy may still reach its shared memory.
    cluster_sync();
}

int main() {
    const int clusters = 3, blocks = clusters * kCluster;
    static float h_in[clusters * kWords], h_seen[blocks * kWords], h_got[blocks * kWords];
    for (int i = 0; i < clusters * kWords; ++i) h_in[i] = (float)(i % 97) * 0.5f + 1.0f;
    float *d_in, *d_seen, *d_got;
    cudaMalloc(&d_in, sizeof h_in);
    cudaMalloc(&d_seen, sizeof h_seen);
    cudaMalloc(&d_got, sizeof h_got);
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    cudaMemset(d_seen, 0, sizeof h_seen);
    cudaMemset(d_got, 0, sizeof h_got);
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
    if (cudaError_t err = cudaLaunchKernelEx(&config, spread, (const float*)d_in, d_seen, d_got)) {
        printf("cluster launch refused: %s\n", cudaGetErrorName(err));
        return 1;
    }
    if (cudaError_t err = cudaDeviceSynchronize()) {
        printf("kernel failed: %s\n", cudaGetErrorName(err));
        return 1;
    }
    cudaMemcpy(h_seen, d_seen, sizeof h_seen, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_got, d_got, sizeof h_got, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int b = 0; b < blocks; ++b) {
        int cluster = b / kCluster, rank = b % kCluster, prev = (rank + kCluster - 1) % kCluster;
        for (int i = 0; i < kWords; ++i) {
            float x = h_in[cluster * kWords + i];
            if (h_seen[b * kWords + i] != x || h_got[b * kWords + i] != (float)(prev + 1) * x) {
                if (bad++ < 5)
                    printf("CTA %d word %d: seen %g got %g, want %g and %g\n", b, i,
                           h_seen[b * kWords + i], h_got[b * kWords + i], x, (prev + 1) * x);
            }
        }
    }
    if (bad) {
        printf("FAIL (%d wrong)\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
