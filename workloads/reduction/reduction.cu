// Sum of a float vector in two launches of one kernel: each CTA reduces its grid-stride
// share in a shared-memory tree (one __syncthreads per level), writing one partial sum;
// a second launch with a single, smaller CTA reduces the partials. The shared buffer is
// dynamic (extern __shared__), sized per launch.
#include "../common/workload.h"

__global__ void reduce_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
    extern __shared__ float partial[];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) {
        sum += in[i];
    }
    partial[tid] = sum;
    __syncthreads();
    // blockDim.x is a power of two.
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? (1 << 21) + 777 : (1 << 16) + 777;
    const int blocks = 64;
    const int threads = 256;
    const int final_threads = 64;

    float* h_in = (float*)malloc(sizeof(float) * n);
    Lcg rng(99u);
    for (int i = 0; i < n; ++i) h_in[i] = rng.unit();

    float *d_in, *d_partial, *d_total;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_partial, sizeof(float) * blocks));
    CUDA_CHECK(cudaMalloc(&d_total, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(float) * n, cudaMemcpyHostToDevice));

    reduce_sum<<<blocks, threads, threads * sizeof(float)>>>(d_in, d_partial, n);
    CUDA_CHECK_LAUNCH();
    reduce_sum<<<1, final_threads, final_threads * sizeof(float)>>>(d_partial, d_total, blocks);
    CUDA_CHECK_LAUNCH();

    float h_partial[blocks];
    float h_total = 0.0f;
    CUDA_CHECK(cudaMemcpy(h_partial, d_partial, sizeof(h_partial), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&h_total, d_total, sizeof(float), cudaMemcpyDeviceToHost));

    // Element i is summed by thread i % (blocks * threads), hence by CTA
    // (i % (blocks * threads)) / threads.
    double ref_partial[blocks] = {0.0};
    for (int i = 0; i < n; ++i) ref_partial[(i % (blocks * threads)) / threads] += h_in[i];
    double ref_total = 0.0;
    for (int b = 0; b < blocks; ++b) ref_total += ref_partial[b];

    // All inputs are positive, so the relative float error is at most about
    // (terms per thread + tree depth) * 2^-24, below 1e-5 even for the large size.
    int result = -1;
    for (int b = 0; b < blocks; ++b) {
        if (abs_d(h_partial[b] - ref_partial[b]) > 2e-5 * ref_partial[b]) {
            result = report_fail("partial[%d] = %.9g, expected %.9g", b, (double)h_partial[b],
                                 ref_partial[b]);
            break;
        }
    }
    if (result < 0 && abs_d(h_total - ref_total) > 2e-5 * ref_total) {
        result = report_fail("total = %.9g, expected %.9g", (double)h_total, ref_total);
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_partial));
    CUDA_CHECK(cudaFree(d_total));
    free(h_in);
    return result < 0 ? report_pass() : result;
}
