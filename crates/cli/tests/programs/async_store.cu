// st.async and red.async (PTX ISA 8.1, sm_90) through inline PTX: a ring of CTAs in a
// cluster of 4 passes data into the next CTA's shared memory, completing on that CTA's
// mbarrier. Checks its results and prints PASS.
//
// ring, launched with cudaLaunchKernelEx and clusters of 4 CTAs of 128 threads: each
// CTA's thread 0 initialises its mbarrier (1 arrival) and zeroes a counter; after a
// cluster barrier, thread 0 arrives with expect_tx of the bytes the previous rank sends
// (128 threads x (4 + 16 + 8 + 4 + 4) bytes), and thread t of CTA b sends to rank
// (r + 1) % 4: st.async .f32 in[b][t] at f[t], .v4.u32 {b, t, b + t, b * t} at q[t],
// .v2.f32 {in[b][t] * 2, -in[b][t]} at g[t], red.async add.u32 t + 1 and max.u32
// 1000 b + t on two counters. Each thread waits on its own mbarrier (try_wait.parity
// 0) and the CTA writes what it received to out. On a GPU below compute capability 9.0
// the runtime refuses the launch.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#include "mbarrier_wait.cuh"

constexpr int kThreads = 128;
constexpr int kCluster = 4;
constexpr unsigned kBytes = kThreads * (4 + 16 + 8 + 4 + 4);
constexpr int kOut = kThreads * (1 + 4 + 2) + 2;

__device__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ unsigned map_to_rank(const void* p, unsigned rank) {
    unsigned a = (unsigned)__cvta_generic_to_shared(p), d;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(rank));
    return d;
}

__global__ void ring(const float* in, unsigned* out) {
    __shared__ __align__(8) unsigned long long bar;
    __shared__ float f[kThreads];
    __shared__ __align__(16) unsigned q[kThreads][4];
    __shared__ __align__(8) float g[kThreads][2];
    __shared__ unsigned counters[2];
    unsigned t = threadIdx.x, b = blockIdx.x;
    unsigned local_bar = (unsigned)__cvta_generic_to_shared(&bar);
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(local_bar) : "memory");
        counters[0] = 0;
        counters[1] = 0;
    }
    cluster_sync();
    if (t == 0)
        asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(
                         local_bar),
                     "r"(kBytes)
                     : "memory");
    unsigned next = (cluster_rank() + 1) % kCluster;
    unsigned rbar = map_to_rank(&bar, next);
    float x = in[b * kThreads + t];
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];" ::"r"(
                     map_to_rank(&f[t], next)),
                 "f"(x), "r"(rbar)
                 : "memory");
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.u32 [%0], {%1, %2, %3, %4}, "
        "[%5];" ::"r"(map_to_rank(&q[t][0], next)),
        "r"(b), "r"(t), "r"(b + t), "r"(b * t), "r"(rbar)
        : "memory");
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
            map_to_rank(&g[t][0], next)),
        "f"(x * 2.0f), "f"(-x), "r"(rbar)
        : "memory");
    asm volatile("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 "
                 "[%0], %1, [%2];" ::"r"(map_to_rank(&counters[0], next)),
                 "r"(t + 1), "r"(rbar)
                 : "memory");
    asm volatile("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.max.u32 "
                 "[%0], %1, [%2];" ::"r"(map_to_rank(&counters[1], next)),
                 "r"(1000 * b + t), "r"(rbar)
                 : "memory");
    while (!try_wait(local_bar, 0)) {
    }
    unsigned* o = out + b * kOut;
    o[t] = __float_as_uint(f[t]);
    for (int i = 0; i < 4; ++i) o[kThreads + 4 * t + i] = q[t][i];
    o[5 * kThreads + 2 * t] = __float_as_uint(g[t][0]);
    o[5 * kThreads + 2 * t + 1] = __float_as_uint(g[t][1]);
    if (t == 0) {
        o[7 * kThreads] = counters[0];
        o[7 * kThreads + 1] = counters[1];
    }
    // No CTA leaves while its neighbour may still send.
    cluster_sync();
}

int main() {
    const int clusters = 3, blocks = clusters * kCluster;
    static float h_in[blocks * kThreads];
    static unsigned h_out[blocks * kOut];
    for (int i = 0; i < blocks * kThreads; ++i) h_in[i] = (float)(i % 97) * 0.5f - 7.0f;
    float* d_in;
    unsigned* d_out;
    cudaMalloc(&d_in, sizeof h_in);
    cudaMalloc(&d_out, sizeof h_out);
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0xEE, sizeof h_out);
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
    if (cudaError_t err = cudaLaunchKernelEx(&config, ring, (const float*)d_in, d_out)) {
        printf("cluster launch refused: %s\n", cudaGetErrorName(err));
        return 1;
    }
    if (cudaError_t err = cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost)) {
        printf("FAILED: %s\n", cudaGetErrorString(err));
        return 1;
    }
    int bad = 0;
    auto bits = [](float v) {
        unsigned u;
        memcpy(&u, &v, 4);
        return u;
    };
    for (int b = 0; b < blocks; ++b) {
        // The sender: the previous rank of the same cluster.
        int s = b / kCluster * kCluster + (b % kCluster + kCluster - 1) % kCluster;
        const unsigned* o = h_out + b * kOut;
        unsigned maxv = 0, sum = 0;
        for (int t = 0; t < kThreads; ++t) {
            float x = h_in[s * kThreads + t];
            unsigned want[7] = {bits(x), (unsigned)s, (unsigned)t, (unsigned)(s + t),
                                (unsigned)(s * t), bits(x * 2.0f), bits(-x)};
            unsigned got[7] = {o[t], o[kThreads + 4 * t], o[kThreads + 4 * t + 1],
                               o[kThreads + 4 * t + 2], o[kThreads + 4 * t + 3],
                               o[5 * kThreads + 2 * t], o[5 * kThreads + 2 * t + 1]};
            for (int i = 0; i < 7; ++i)
                if (got[i] != want[i] && bad++ < 5)
                    printf("CTA %d thread %d item %d = %#x, expected %#x\n", b, t, i, got[i],
                           want[i]);
            sum += t + 1;
            maxv = 1000u * s + t > maxv ? 1000u * s + t : maxv;
        }
        if ((o[7 * kThreads] != sum || o[7 * kThreads + 1] != maxv) && bad++ < 5)
            printf("CTA %d counters %u %u, expected %u %u\n", b, o[7 * kThreads],
                   o[7 * kThreads + 1], sum, maxv);
    }
    printf(bad ? "FAILED\n" : "PASS\n");
    return bad ? 1 : 0;
}
