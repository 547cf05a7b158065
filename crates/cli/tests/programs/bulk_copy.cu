// Non-tensor bulk copies (sm_90) through inline PTX: each CTA's thread 0 copies a block
// of 1024 floats into shared memory with cp.async.bulk, completing on an mbarrier that
// every thread waits on; the threads scale the block in shared memory and thread 0
// copies it back out with a bulk_group copy. Checks its result and prints PASS.
#include <cstdio>
#include <cuda_runtime.h>

#include "mbarrier_wait.cuh"

constexpr int kBlock = 1024;

__global__ void scale(const float* in, float* out, float k) {
    __shared__ __align__(16) float block[kBlock];
    __shared__ __align__(8) unsigned long long bar;
    unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned sblock = (unsigned)__cvta_generic_to_shared(block);
    const float* src = in + blockIdx.x * kBlock;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(sbar), "r"(kBlock * 4) : "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0)
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
            :: "r"(sblock), "l"(src), "r"(kBlock * 4), "r"(sbar) : "memory");
    while (!try_wait(sbar, 0)) {
    }
    for (int i = threadIdx.x; i < kBlock; i += blockDim.x) block[i] *= k;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     :: "l"(out + blockIdx.x * kBlock), "r"(sblock), "r"(kBlock * 4) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

int main() {
    const int blocks = 4, n = blocks * kBlock;
    static float h_in[n], h_out[n];
    for (int i = 0; i < n; ++i) h_in[i] = (float)(i % 97) - 48.0f;
    float *d_in, *d_out;
    cudaMalloc(&d_in, sizeof h_in);
    cudaMalloc(&d_out, sizeof h_out);
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    scale<<<blocks, 128>>>(d_in, d_out, 0.5f);
    // The copy back waits for the kernel and reports its error.
    if (cudaError_t err = cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost)) {
        printf("FAILED: %s\n", cudaGetErrorString(err));
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < n; ++i)
        if (h_out[i] != 0.5f * h_in[i] && bad++ < 5)
            printf("out[%d] = %g, expected %g\n", i, h_out[i], 0.5f * h_in[i]);
    printf(bad ? "FAILED\n" : "PASS\n");
    return bad ? 1 : 0;
}
