// Point lookups in a static B+tree of fanout 16: each thread descends from the root,
// counting in every inner node the separators not above its key (16 keys, read as four
// 128-bit loads) to pick the child, then searches the leaf for the key and returns its
// value or -1. The tree is stored level by level, node i's children at 16i..16i+15, so
// the upper levels are small and every query re-reads them: the level above the leaves
// (16 KB for the default tree) stays in an L1D that is larger than it and is thrashed by
// leaf traffic in one that is not.
#include "../common/workload.h"

#define FANOUT 16
#define THREADS 128
#define MAX_LEVELS 8

struct Tree {
    const int* level[MAX_LEVELS];  // inner levels, root first: FANOUT separators per node
    int inner_levels;
    const int* leaf_keys;  // FANOUT sorted keys per leaf
    const int* leaf_values;
};

__global__ void __launch_bounds__(THREADS)
bptree_lookup(Tree tree, const int* __restrict__ queries, int* __restrict__ found, int n) {
    int q = blockIdx.x * THREADS + threadIdx.x;
    if (q >= n) return;
    int key = queries[q];
    int node = 0;
    for (int l = 0; l < tree.inner_levels; ++l) {
        const int4* sep = reinterpret_cast<const int4*>(tree.level[l] + node * FANOUT);
        // Separator j is the smallest key under child j; child 0 also takes keys below it.
        int child = -1;
#pragma unroll
        for (int v = 0; v < FANOUT / 4; ++v) {
            int4 s = sep[v];
            child += (s.x <= key) + (s.y <= key) + (s.z <= key) + (s.w <= key);
        }
        node = node * FANOUT + (child < 0 ? 0 : child);
    }
    const int4* keys = reinterpret_cast<const int4*>(tree.leaf_keys + node * FANOUT);
    int slot = -1;
#pragma unroll
    for (int v = 0; v < FANOUT / 4; ++v) {
        int4 k = keys[v];
        if (k.x == key) slot = 4 * v;
        if (k.y == key) slot = 4 * v + 1;
        if (k.z == key) slot = 4 * v + 2;
        if (k.w == key) slot = 4 * v + 3;
    }
    found[q] = slot < 0 ? -1 : tree.leaf_values[node * FANOUT + slot];
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int inner_levels = large ? 4 : 3;  // 16^4 or 16^5 keys
    int nq = large ? 262144 : 32768;
    int leaves = 1;
    for (int l = 0; l < inner_levels; ++l) leaves *= FANOUT;
    int nkeys = leaves * FANOUT;

    // Keys: strictly increasing with random gaps, so absent keys fall between them.
    int* h_keys = (int*)malloc(sizeof(int) * nkeys);
    int* h_values = (int*)malloc(sizeof(int) * nkeys);
    Lcg rng(616u);
    int k = 0;
    for (int i = 0; i < nkeys; ++i) {
        k += 1 + (int)rng.below(4);
        h_keys[i] = k;
        h_values[i] = (int)rng.below(1u << 30);
    }
    int max_key = k;
    // Inner level l has FANOUT^l nodes; separator j of node i is the first key of its child
    // subtree, whose keys start at leaf (i * FANOUT + j) * FANOUT^(levels - l - 1).
    int* h_level[MAX_LEVELS];
    int* d_level[MAX_LEVELS];
    Tree tree;
    tree.inner_levels = inner_levels;
    int nodes = 1;
    for (int l = 0; l < inner_levels; ++l) {
        int below = 1;
        for (int m = l + 1; m < inner_levels; ++m) below *= FANOUT;
        h_level[l] = (int*)malloc(sizeof(int) * nodes * FANOUT);
        for (int i = 0; i < nodes * FANOUT; ++i) h_level[l][i] = h_keys[(size_t)i * below * FANOUT];
        CUDA_CHECK(cudaMalloc(&d_level[l], sizeof(int) * nodes * FANOUT));
        CUDA_CHECK(cudaMemcpy(d_level[l], h_level[l], sizeof(int) * nodes * FANOUT,
                              cudaMemcpyHostToDevice));
        tree.level[l] = d_level[l];
        nodes *= FANOUT;
    }
    for (int l = inner_levels; l < MAX_LEVELS; ++l) tree.level[l] = nullptr;
    int *d_keys, *d_values, *d_queries, *d_found;
    CUDA_CHECK(cudaMalloc(&d_keys, sizeof(int) * nkeys));
    CUDA_CHECK(cudaMalloc(&d_values, sizeof(int) * nkeys));
    CUDA_CHECK(cudaMemcpy(d_keys, h_keys, sizeof(int) * nkeys, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_values, h_values, sizeof(int) * nkeys, cudaMemcpyHostToDevice));
    tree.leaf_keys = d_keys;
    tree.leaf_values = d_values;

    // Queries: uniformly random keys in [0, max_key + 2], so about 40% are present.
    int* h_q = (int*)malloc(sizeof(int) * nq);
    for (int i = 0; i < nq; ++i) h_q[i] = (int)rng.below((uint32_t)max_key + 3);
    CUDA_CHECK(cudaMalloc(&d_queries, sizeof(int) * nq));
    CUDA_CHECK(cudaMalloc(&d_found, sizeof(int) * nq));
    CUDA_CHECK(cudaMemcpy(d_queries, h_q, sizeof(int) * nq, cudaMemcpyHostToDevice));
    bptree_lookup<<<(nq + THREADS - 1) / THREADS, THREADS>>>(tree, d_queries, d_found, nq);
    CUDA_CHECK_LAUNCH();
    int* h_found = (int*)malloc(sizeof(int) * nq);
    CUDA_CHECK(cudaMemcpy(h_found, d_found, sizeof(int) * nq, cudaMemcpyDeviceToHost));

    // Reference: binary search over the sorted keys.
    int result = -1, hits = 0;
    for (int i = 0; i < nq; ++i) {
        int lo = 0, hi = nkeys;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (h_keys[mid] < h_q[i]) lo = mid + 1; else hi = mid;
        }
        int want = lo < nkeys && h_keys[lo] == h_q[i] ? h_values[lo] : -1;
        hits += want >= 0;
        if (h_found[i] != want) {
            result = report_fail("query %d (key %d) found %d, expected %d", i, h_q[i], h_found[i], want);
            break;
        }
    }
    if (result < 0 && (hits < nq / 5 || hits > nq * 4 / 5))
        result = report_fail("%d of %d queries hit: the query mix is wrong", hits, nq);

    for (int l = 0; l < inner_levels; ++l) {
        CUDA_CHECK(cudaFree(d_level[l]));
        free(h_level[l]);
    }
    CUDA_CHECK(cudaFree(d_keys));
    CUDA_CHECK(cudaFree(d_values));
    CUDA_CHECK(cudaFree(d_queries));
    CUDA_CHECK(cudaFree(d_found));
    free(h_keys);
    free(h_values);
    free(h_q);
    free(h_found);
    return result < 0 ? report_pass() : result;
}
