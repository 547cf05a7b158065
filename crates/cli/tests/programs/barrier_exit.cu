// Barriers after some threads have exited (regsim issue 15, class 2). A tree search in
// the shape of the GPU suites' kernels: threads without a query return at once (whole
// warps and part of a warp), threads whose search ends return from inside the loop, and
// the rest keep meeting __syncthreads around a shared-memory stage. On the hardware exited
// threads no longer count toward a CTA barrier (PTX ISA, bar.sync), so every launch
// completes. Prints PASS or FAIL: <reason>; exits 0 on PASS.
#include <cstdio>
#include <cuda_runtime.h>

#define DEPTH 10
#define NODES ((1 << DEPTH) - 1)

// keys: a complete binary search tree in heap order over 0, 2, 4, ... (even numbers).
__global__ void tree_search(const int* keys, const int* queries, int nq, int* depth_found, int* visits) {
    __shared__ int stage[128];
    int t = threadIdx.x;
    int q = blockIdx.x * blockDim.x + t;
    if (q >= nq) return;                     // no query: exits before any barrier
    int key = queries[q];
    int node = 0;
    for (int d = 0; d < DEPTH; ++d) {
        stage[t] = keys[node];
        __syncthreads();                     // exited threads must not be waited for
        int k = stage[t];
        atomicAdd(&visits[d], 1);
        __syncthreads();
        if (k == key) { depth_found[q] = d; return; }   // found: leaves the loop early
        node = 2 * node + (key < k ? 1 : 2);
        if (node >= NODES) break;
    }
    depth_found[q] = -1;
}

static void build(int* keys, int node, int lo, int hi) {  // in-order values lo..hi-1
    if (node >= NODES || lo >= hi) return;
    int mid = (lo + hi) / 2;
    keys[node] = 2 * mid;
    build(keys, 2 * node + 1, lo, mid);
    build(keys, 2 * node + 2, mid + 1, hi);
}

int main() {
    const int nq = 300, threads = 128, blocks = (nq + threads - 1) / threads;  // last CTA: 44 of 128
    static int keys[NODES], queries[nq], found[nq], visits[DEPTH];
    build(keys, 0, 0, NODES);
    unsigned x = 12345;
    for (int i = 0; i < nq; ++i) { x = x * 1103515245u + 12345u; queries[i] = (x >> 8) % (2 * NODES); }
    int *d_keys, *d_q, *d_found, *d_visits;
    if (cudaMalloc(&d_keys, sizeof keys) != cudaSuccess || cudaMalloc(&d_q, sizeof queries) != cudaSuccess ||
        cudaMalloc(&d_found, sizeof found) != cudaSuccess || cudaMalloc(&d_visits, sizeof visits) != cudaSuccess)
        return 2;
    cudaMemcpy(d_keys, keys, sizeof keys, cudaMemcpyHostToDevice);
    cudaMemcpy(d_q, queries, sizeof queries, cudaMemcpyHostToDevice);
    cudaMemset(d_visits, 0, sizeof visits);
    tree_search<<<blocks, threads>>>(d_keys, d_q, nq, d_found, d_visits);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("FAIL: %s\n", cudaGetErrorName(e)); return 1; }
    cudaMemcpy(found, d_found, sizeof found, cudaMemcpyDeviceToHost);
    cudaMemcpy(visits, d_visits, sizeof visits, cudaMemcpyDeviceToHost);
    int want_visits[DEPTH] = {0};
    for (int i = 0; i < nq; ++i) {
        int node = 0, want = -1;
        for (int d = 0; d < DEPTH; ++d) {
            want_visits[d]++;
            if (keys[node] == queries[i]) { want = d; break; }
            node = 2 * node + (queries[i] < keys[node] ? 1 : 2);
            if (node >= NODES) break;
        }
        if (found[i] != want) { printf("FAIL: query %d (%d) found at depth %d, want %d\n", i, queries[i], found[i], want); return 1; }
    }
    for (int d = 0; d < DEPTH; ++d)
        if (visits[d] != want_visits[d]) { printf("FAIL: visits[%d] = %d, want %d\n", d, visits[d], want_visits[d]); return 1; }
    printf("PASS\n");
    return 0;
}
