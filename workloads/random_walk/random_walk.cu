// Random walks on a graph (the sampling step of random-walk graph embeddings): every
// thread is a walker that takes a fixed number of steps, each to a uniformly chosen
// neighbour of its current vertex (CSR adjacency, its own 32-bit LCG), and returns the
// sum of the vertices it visited and where it stopped. Each step is two dependent loads
// (the vertex's offsets, then the chosen edge) at random places in a 40 KB graph, so a
// walker waits on the L1D at every step: the graph fits in a 64 KB L1D and not in 16 KB.
// Integer arithmetic; the host repeats the walks exactly.
#include "../common/workload.h"

#define THREADS 128

__host__ __device__ inline uint32_t walk_rng(uint32_t s) { return s * 1103515245u + 12345u; }

__global__ void __launch_bounds__(THREADS)
random_walk(const int* __restrict__ offsets, const int* __restrict__ edges,
            const int* __restrict__ starts, unsigned* __restrict__ checksum, int* __restrict__ ends,
            int walkers, int steps) {
    int w = blockIdx.x * THREADS + threadIdx.x;
    if (w >= walkers) return;
    int v = starts[w];
    uint32_t state = 0x9e3779b9u ^ (uint32_t)w;
    unsigned sum = 0;
    for (int s = 0; s < steps; ++s) {
        int lo = offsets[v], degree = offsets[v + 1] - lo;
        state = walk_rng(state);
        v = edges[lo + (int)((state >> 16) % (uint32_t)degree)];
        sum += (unsigned)v;
    }
    checksum[w] = sum;
    ends[w] = v;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int vertices = 2048;
    int walkers = large ? 65536 : 8192;
    int steps = large ? 64 : 24;

    // Degrees 2..6 (mean 4); neighbours uniformly random, so no locality to exploit.
    int* h_off = (int*)malloc(sizeof(int) * (vertices + 1));
    Lcg rng(31337u);
    h_off[0] = 0;
    for (int v = 0; v < vertices; ++v) h_off[v + 1] = h_off[v] + 2 + (int)rng.below(5);
    int nedges = h_off[vertices];
    int* h_edges = (int*)malloc(sizeof(int) * nedges);
    for (int e = 0; e < nedges; ++e) h_edges[e] = (int)rng.below(vertices);
    int* h_starts = (int*)malloc(sizeof(int) * walkers);
    for (int w = 0; w < walkers; ++w) h_starts[w] = (int)rng.below(vertices);

    int *d_off, *d_edges, *d_starts, *d_ends;
    unsigned* d_sum;
    CUDA_CHECK(cudaMalloc(&d_off, sizeof(int) * (vertices + 1)));
    CUDA_CHECK(cudaMalloc(&d_edges, sizeof(int) * nedges));
    CUDA_CHECK(cudaMalloc(&d_starts, sizeof(int) * walkers));
    CUDA_CHECK(cudaMalloc(&d_ends, sizeof(int) * walkers));
    CUDA_CHECK(cudaMalloc(&d_sum, sizeof(unsigned) * walkers));
    CUDA_CHECK(cudaMemcpy(d_off, h_off, sizeof(int) * (vertices + 1), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_edges, h_edges, sizeof(int) * nedges, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_starts, h_starts, sizeof(int) * walkers, cudaMemcpyHostToDevice));
    random_walk<<<(walkers + THREADS - 1) / THREADS, THREADS>>>(d_off, d_edges, d_starts, d_sum,
                                                                d_ends, walkers, steps);
    CUDA_CHECK_LAUNCH();
    unsigned* h_sum = (unsigned*)malloc(sizeof(unsigned) * walkers);
    int* h_ends = (int*)malloc(sizeof(int) * walkers);
    CUDA_CHECK(cudaMemcpy(h_sum, d_sum, sizeof(unsigned) * walkers, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_ends, d_ends, sizeof(int) * walkers, cudaMemcpyDeviceToHost));

    int result = -1;
    for (int w = 0; w < walkers; ++w) {
        int v = h_starts[w];
        uint32_t state = 0x9e3779b9u ^ (uint32_t)w;
        unsigned sum = 0;
        for (int s = 0; s < steps; ++s) {
            int lo = h_off[v], degree = h_off[v + 1] - lo;
            state = walk_rng(state);
            v = h_edges[lo + (int)((state >> 16) % (uint32_t)degree)];
            sum += (unsigned)v;
        }
        if (h_sum[w] != sum || h_ends[w] != v) {
            result = report_fail("walker %d: sum %u end %d, expected %u end %d", w, h_sum[w],
                                 h_ends[w], sum, v);
            break;
        }
    }
    CUDA_CHECK(cudaFree(d_off));
    CUDA_CHECK(cudaFree(d_edges));
    CUDA_CHECK(cudaFree(d_starts));
    CUDA_CHECK(cudaFree(d_ends));
    CUDA_CHECK(cudaFree(d_sum));
    free(h_off);
    free(h_edges);
    free(h_starts);
    free(h_sum);
    free(h_ends);
    return result < 0 ? report_pass() : result;
}
