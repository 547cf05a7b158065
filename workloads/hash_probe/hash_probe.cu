// The probe phase of a hash join: a build table of 2,048 (key, value) entries in 1,024
// buckets, chained through next indices (about 36 KB in all), and a stream of probe keys.
// Every thread probes eight keys one after another, following each chain from its bucket
// head and adding the values of matching entries, so each probe is a chain of dependent
// loads at random places in the table: it fits in a 64 KB L1D and not in 16 KB. Integer
// arithmetic; the host repeats the probes exactly.
#include "../common/workload.h"

#define THREADS 128
#define PROBES_PER_THREAD 8
#define BUCKETS 1024

struct Entry {
    int key;
    int value;
    int next;  // index of the next entry in the bucket, -1 at the end
    int pad;
};

__host__ __device__ inline int bucket_of(int key) {
    return (int)(((uint32_t)key * 2654435761u) >> 22);  // 10 bits: BUCKETS
}

__global__ void __launch_bounds__(THREADS)
hash_probe(const int* __restrict__ heads, const Entry* __restrict__ entries,
           const int* __restrict__ probes, long long* __restrict__ sums, int* __restrict__ matches,
           int nthreads) {
    int t = blockIdx.x * THREADS + threadIdx.x;
    if (t >= nthreads) return;
    long long sum = 0;
    int count = 0;
    for (int p = 0; p < PROBES_PER_THREAD; ++p) {
        int key = probes[p * nthreads + t];
        for (int e = heads[bucket_of(key)]; e >= 0;) {
            Entry entry = entries[e];
            if (entry.key == key) {
                sum += entry.value;
                ++count;
            }
            e = entry.next;
        }
    }
    sums[t] = sum;
    matches[t] = count;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int nentries = 2048;
    int nthreads = large ? 65536 : 6144;
    int nprobes = nthreads * PROBES_PER_THREAD;

    // Keys drawn from [0, 4096): some repeat (a join with duplicates), half the probes miss.
    int h_heads[BUCKETS];
    for (int b = 0; b < BUCKETS; ++b) h_heads[b] = -1;
    Entry* h_entries = (Entry*)malloc(sizeof(Entry) * nentries);
    Lcg rng(4711u);
    for (int e = 0; e < nentries; ++e) {
        int key = (int)rng.below(4096);
        h_entries[e].key = key;
        h_entries[e].value = (int)rng.below(1000000);
        h_entries[e].pad = 0;
        h_entries[e].next = h_heads[bucket_of(key)];
        h_heads[bucket_of(key)] = e;
    }
    int* h_probes = (int*)malloc(sizeof(int) * nprobes);
    for (int i = 0; i < nprobes; ++i) h_probes[i] = (int)rng.below(4096);

    int *d_heads, *d_probes, *d_matches;
    Entry* d_entries;
    long long* d_sums;
    CUDA_CHECK(cudaMalloc(&d_heads, sizeof(h_heads)));
    CUDA_CHECK(cudaMalloc(&d_entries, sizeof(Entry) * nentries));
    CUDA_CHECK(cudaMalloc(&d_probes, sizeof(int) * nprobes));
    CUDA_CHECK(cudaMalloc(&d_sums, sizeof(long long) * nthreads));
    CUDA_CHECK(cudaMalloc(&d_matches, sizeof(int) * nthreads));
    CUDA_CHECK(cudaMemcpy(d_heads, h_heads, sizeof(h_heads), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_entries, h_entries, sizeof(Entry) * nentries, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_probes, h_probes, sizeof(int) * nprobes, cudaMemcpyHostToDevice));
    hash_probe<<<(nthreads + THREADS - 1) / THREADS, THREADS>>>(d_heads, d_entries, d_probes,
                                                               d_sums, d_matches, nthreads);
    CUDA_CHECK_LAUNCH();
    long long* h_sums = (long long*)malloc(sizeof(long long) * nthreads);
    int* h_matches = (int*)malloc(sizeof(int) * nthreads);
    CUDA_CHECK(cudaMemcpy(h_sums, d_sums, sizeof(long long) * nthreads, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_matches, d_matches, sizeof(int) * nthreads, cudaMemcpyDeviceToHost));

    int result = -1;
    long long total_matches = 0;
    for (int t = 0; t < nthreads; ++t) {
        long long sum = 0;
        int count = 0;
        for (int p = 0; p < PROBES_PER_THREAD; ++p) {
            int key = h_probes[p * nthreads + t];
            for (int e = h_heads[bucket_of(key)]; e >= 0; e = h_entries[e].next)
                if (h_entries[e].key == key) {
                    sum += h_entries[e].value;
                    ++count;
                }
        }
        total_matches += count;
        if (h_sums[t] != sum || h_matches[t] != count) {
            result = report_fail("thread %d: %d matches summing %lld, expected %d summing %lld", t,
                                 h_matches[t], h_sums[t], count, sum);
            break;
        }
    }
    // About half the probe keys are in the table; a probe that never matched would not be.
    if (result < 0 && total_matches < nprobes / 4)
        result = report_fail("only %lld matches for %d probes", total_matches, nprobes);
    CUDA_CHECK(cudaFree(d_heads));
    CUDA_CHECK(cudaFree(d_entries));
    CUDA_CHECK(cudaFree(d_probes));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_matches));
    free(h_entries);
    free(h_probes);
    free(h_sums);
    free(h_matches);
    return result < 0 ? report_pass() : result;
}
