// Exclusive prefix sum of an int vector. Each CTA of 256 threads scans 512 elements in
// shared memory with the work-efficient two-phase (up-sweep / down-sweep) algorithm and
// records its block total; the block totals are scanned recursively with the same
// kernel, then a third kernel adds each block's offset. The small size needs two levels,
// the large size three.
#include "../common/workload.h"

#define SCAN_THREADS 256
#define SCAN_ELEMS (2 * SCAN_THREADS)

// block_sums may be null when the whole input fits in one CTA.
__global__ void scan_blocks(const int* __restrict__ in, int* __restrict__ out,
                            int* __restrict__ block_sums, int n) {
    __shared__ int tree[SCAN_ELEMS];
    int tid = threadIdx.x;
    int i0 = blockIdx.x * SCAN_ELEMS + 2 * tid;
    int i1 = i0 + 1;
    tree[2 * tid] = i0 < n ? in[i0] : 0;
    tree[2 * tid + 1] = i1 < n ? in[i1] : 0;

    // Up-sweep: after the level with stride `offset`, tree[k*2*offset - 1] holds the sum
    // of the 2*offset elements ending there.
    int offset = 1;
    for (int active = SCAN_ELEMS / 2; active > 0; active /= 2) {
        __syncthreads();
        if (tid < active) {
            int left = offset * (2 * tid + 1) - 1;
            int right = offset * (2 * tid + 2) - 1;
            tree[right] += tree[left];
        }
        offset *= 2;
    }
    // Thread 0 wrote the root in the last level, so it can read it without a barrier.
    if (tid == 0) {
        if (block_sums != nullptr) block_sums[blockIdx.x] = tree[SCAN_ELEMS - 1];
        tree[SCAN_ELEMS - 1] = 0;
    }

    // Down-sweep: each node passes its prefix to its left child and prefix + left-child
    // sum to its right child.
    for (int active = 1; active < SCAN_ELEMS; active *= 2) {
        offset /= 2;
        __syncthreads();
        if (tid < active) {
            int left = offset * (2 * tid + 1) - 1;
            int right = offset * (2 * tid + 2) - 1;
            int left_sum = tree[left];
            tree[left] = tree[right];
            tree[right] += left_sum;
        }
    }
    __syncthreads();
    if (i0 < n) out[i0] = tree[2 * tid];
    if (i1 < n) out[i1] = tree[2 * tid + 1];
}

__global__ void add_block_offsets(int* __restrict__ data, const int* __restrict__ offsets, int n) {
    int add = offsets[blockIdx.x];
    int i0 = blockIdx.x * SCAN_ELEMS + threadIdx.x;
    int i1 = i0 + SCAN_THREADS;
    if (i0 < n) data[i0] += add;
    if (i1 < n) data[i1] += add;
}

// Exclusive scan of d_in[0..n) into d_out, n >= 1.
static void scan_device(const int* d_in, int* d_out, int n) {
    int blocks = (n + SCAN_ELEMS - 1) / SCAN_ELEMS;
    if (blocks == 1) {
        scan_blocks<<<1, SCAN_THREADS>>>(d_in, d_out, nullptr, n);
        CUDA_CHECK_LAUNCH();
        return;
    }
    int *d_sums, *d_offsets;
    CUDA_CHECK(cudaMalloc(&d_sums, sizeof(int) * blocks));
    CUDA_CHECK(cudaMalloc(&d_offsets, sizeof(int) * blocks));
    scan_blocks<<<blocks, SCAN_THREADS>>>(d_in, d_out, d_sums, n);
    CUDA_CHECK_LAUNCH();
    scan_device(d_sums, d_offsets, blocks);
    add_block_offsets<<<blocks, SCAN_THREADS>>>(d_out, d_offsets, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_offsets));
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 1000000 : 60000;

    int* h_in = (int*)malloc(sizeof(int) * n);
    int* h_out = (int*)malloc(sizeof(int) * n);
    Lcg rng(31337u);
    for (int i = 0; i < n; ++i) h_in[i] = (int)rng.below(101) - 50;

    int *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(int) * n));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(int) * n, cudaMemcpyHostToDevice));
    scan_device(d_in, d_out, n);
    CUDA_CHECK(cudaMemcpy(h_out, d_out, sizeof(int) * n, cudaMemcpyDeviceToHost));

    int result = -1;
    int running = 0;
    for (int i = 0; i < n; ++i) {
        if (h_out[i] != running) {
            result = report_fail("out[%d] = %d, expected %d", i, h_out[i], running);
            break;
        }
        running += h_in[i];
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
