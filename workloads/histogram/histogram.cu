// 256-bin byte histogram. Each CTA counts its grid-stride share into a shared-memory
// histogram with shared atomics, then merges the non-zero bins into the global histogram
// with global atomics. Half of the input falls in 8 bins, so shared atomics collide
// within a warp. The CTA has 192 threads, so clearing and merging 256 bins leaves part
// of the CTA idle in the second round.
#include "../common/workload.h"

#define BINS 256

__global__ void histogram256(const unsigned char* __restrict__ data, int n,
                             unsigned int* __restrict__ hist) {
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[data[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int count = local[b];
        if (count != 0) atomicAdd(&hist[b], count);
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 4000000 + 13 : 131072 + 13;
    const int blocks = 32;
    const int threads = 192;

    unsigned char* h_data = (unsigned char*)malloc(n);
    Lcg rng(4242u);
    for (int i = 0; i < n; ++i) {
        h_data[i] = (unsigned char)(rng.below(2) == 0 ? 100 + rng.below(8) : rng.below(BINS));
    }

    unsigned char* d_data;
    unsigned int* d_hist;
    CUDA_CHECK(cudaMalloc(&d_data, n));
    CUDA_CHECK(cudaMalloc(&d_hist, sizeof(unsigned int) * BINS));
    CUDA_CHECK(cudaMemcpy(d_data, h_data, n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_hist, 0, sizeof(unsigned int) * BINS));

    histogram256<<<blocks, threads>>>(d_data, n, d_hist);
    CUDA_CHECK_LAUNCH();

    unsigned int h_hist[BINS];
    CUDA_CHECK(cudaMemcpy(h_hist, d_hist, sizeof(h_hist), cudaMemcpyDeviceToHost));

    unsigned int ref[BINS] = {0};
    for (int i = 0; i < n; ++i) ref[h_data[i]]++;
    int result = -1;
    for (int b = 0; b < BINS; ++b) {
        if (h_hist[b] != ref[b]) {
            result = report_fail("bin %d = %u, expected %u", b, h_hist[b], ref[b]);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_data));
    CUDA_CHECK(cudaFree(d_hist));
    free(h_data);
    return result < 0 ? report_pass() : result;
}
