// Per-thread arrays indexed at run time, which the compiler must place in local memory:
// each thread insertion-sorts its own 16 integers (the inner loop's trip count and the
// indices it touches depend on the data) and then counts its values into 8 buckets
// chosen by the values themselves.
#include "../common/workload.h"

#define ITEMS 16
#define BUCKETS 8

// in, out: ITEMS values per thread, item-major (item k of thread t at k * total + t) so
// that every load and store coalesces. counts: BUCKETS per thread, also bucket-major.
__global__ void sort_per_thread(const int* __restrict__ in, int* __restrict__ out,
                                int* __restrict__ counts, int total) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    int items[ITEMS];
    for (int k = 0; k < ITEMS; ++k) items[k] = in[k * total + t];

    for (int k = 1; k < ITEMS; ++k) {
        int v = items[k];
        int j = k - 1;
        while (j >= 0 && items[j] > v) {
            items[j + 1] = items[j];
            --j;
        }
        items[j + 1] = v;
    }

    int bucket[BUCKETS];
    for (int b = 0; b < BUCKETS; ++b) bucket[b] = 0;
    for (int k = 0; k < ITEMS; ++k) bucket[items[k] & (BUCKETS - 1)]++;

    // Kept rolled: when nvcc 11.8 unrolls this copy it vectorises the local loads
    // differently from run to run, and the committed PTX must be reproducible.
#pragma unroll 1
    for (int k = 0; k < ITEMS; ++k) out[k * total + t] = items[k];
    for (int b = 0; b < BUCKETS; ++b) counts[b * total + t] = bucket[b];
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int total = large ? 65536 + 40 : 4096 + 40;
    const int threads = 128;

    int* h_in = (int*)malloc(sizeof(int) * ITEMS * total);
    int* h_out = (int*)malloc(sizeof(int) * ITEMS * total);
    int* h_counts = (int*)malloc(sizeof(int) * BUCKETS * total);
    Lcg rng(1234567u);
    for (int i = 0; i < ITEMS * total; ++i) h_in[i] = (int)rng.below(2001) - 1000;

    int *d_in, *d_out, *d_counts;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(int) * ITEMS * total));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(int) * ITEMS * total));
    CUDA_CHECK(cudaMalloc(&d_counts, sizeof(int) * BUCKETS * total));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(int) * ITEMS * total, cudaMemcpyHostToDevice));

    sort_per_thread<<<(total + threads - 1) / threads, threads>>>(d_in, d_out, d_counts, total);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_out, d_out, sizeof(int) * ITEMS * total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_counts, d_counts, sizeof(int) * BUCKETS * total, cudaMemcpyDeviceToHost));

    int result = -1;
    for (int t = 0; t < total && result < 0; ++t) {
        // Reference: a selection sort, a different algorithm from the device's.
        int ref[ITEMS];
        for (int k = 0; k < ITEMS; ++k) ref[k] = h_in[k * total + t];
        for (int k = 0; k < ITEMS; ++k) {
            int min_at = k;
            for (int j = k + 1; j < ITEMS; ++j) {
                if (ref[j] < ref[min_at]) min_at = j;
            }
            int tmp = ref[k];
            ref[k] = ref[min_at];
            ref[min_at] = tmp;
        }
        int ref_counts[BUCKETS] = {0};
        for (int k = 0; k < ITEMS; ++k) ref_counts[ref[k] & (BUCKETS - 1)]++;
        for (int k = 0; k < ITEMS; ++k) {
            if (h_out[k * total + t] != ref[k]) {
                result = report_fail("thread %d item %d = %d, expected %d", t, k, h_out[k * total + t], ref[k]);
                break;
            }
        }
        for (int b = 0; b < BUCKETS && result < 0; ++b) {
            if (h_counts[b * total + t] != ref_counts[b]) {
                result = report_fail("thread %d bucket %d = %d, expected %d", t, b,
                                     h_counts[b * total + t], ref_counts[b]);
            }
        }
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_counts));
    free(h_in);
    free(h_out);
    free(h_counts);
    return result < 0 ? report_pass() : result;
}
