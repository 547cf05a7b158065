// Control-flow divergence inside loops. Odd and even lanes of every warp take different
// branches: odd lanes count Collatz steps (a loop whose trip count depends on the data,
// with an if/else on parity in its body, in 64-bit arithmetic), even lanes run Euclid's
// algorithm. Then all lanes run a loop with a data-dependent bound, `continue` and
// `break`. The warp only reconverges after its slowest lane finishes each loop.
#include "../common/workload.h"

__host__ __device__ inline int collatz_steps(uint64_t x, uint64_t* peak) {
    int steps = 0;
    uint64_t highest = x;
    while (x != 1) {
        if (x & 1) {
            x = 3 * x + 1;
            if (x > highest) highest = x;
        } else {
            x >>= 1;
        }
        ++steps;
    }
    *peak = highest;
    return steps;
}

__host__ __device__ inline int euclid_steps(uint32_t a, uint32_t b, uint32_t* gcd) {
    int steps = 0;
    while (b != 0) {
        uint32_t r = a % b;
        a = b;
        b = r;
        ++steps;
    }
    *gcd = a;
    return steps;
}

__host__ __device__ inline uint32_t skip_loop(uint32_t v) {
    uint32_t acc = 0;
    for (int j = 0; j < (int)(v & 31); ++j) {
        if ((v >> j) & 1) continue;
        acc += (uint32_t)j * v;
        if (acc > 2000000u) break;
    }
    return acc;
}

// lane_parity_odd: whether this element is handled by an odd lane. The kernel derives it
// from threadIdx.x, the host reference from the element index (equal since blocks have an
// even number of threads).
__host__ __device__ inline void process(uint32_t v, bool lane_parity_odd, int* steps, uint32_t* value) {
    if (lane_parity_odd) {
        uint64_t peak;
        *steps = collatz_steps(v, &peak);
        *value = (uint32_t)(peak >> 1) ^ (uint32_t)(peak >> 33);
    } else {
        uint32_t gcd;
        *steps = euclid_steps(v, (v * 2654435761u) >> 12, &gcd);
        *value = gcd;
    }
    *value ^= skip_loop(v);
}

__global__ void divergent_loops(const uint32_t* __restrict__ in, int n, int* __restrict__ out_steps,
                                uint32_t* __restrict__ out_value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int steps;
    uint32_t value;
    process(in[i], (threadIdx.x & 1) != 0, &steps, &value);
    out_steps[i] = steps;
    out_value[i] = value;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 32768 + 17 : 2048 + 17;
    const int threads = 64;  // even, see process()

    uint32_t* h_in = (uint32_t*)malloc(sizeof(uint32_t) * n);
    int* h_steps = (int*)malloc(sizeof(int) * n);
    uint32_t* h_value = (uint32_t*)malloc(sizeof(uint32_t) * n);
    Lcg rng(3u);
    // Starting values in [1, 100000]: Collatz trajectories stay below 2^31 there.
    for (int i = 0; i < n; ++i) h_in[i] = 1 + rng.below(100000);

    uint32_t *d_in, *d_value;
    int* d_steps;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(uint32_t) * n));
    CUDA_CHECK(cudaMalloc(&d_steps, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_value, sizeof(uint32_t) * n));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(uint32_t) * n, cudaMemcpyHostToDevice));

    divergent_loops<<<(n + threads - 1) / threads, threads>>>(d_in, n, d_steps, d_value);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_steps, d_steps, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_value, d_value, sizeof(uint32_t) * n, cudaMemcpyDeviceToHost));

    int result = -1;
    for (int i = 0; i < n; ++i) {
        int steps;
        uint32_t value;
        process(h_in[i], (i & 1) != 0, &steps, &value);
        if (h_steps[i] != steps || h_value[i] != value) {
            result = report_fail("element %d: steps %d value %u, expected %d and %u", i, h_steps[i],
                                 h_value[i], steps, value);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_steps));
    CUDA_CHECK(cudaFree(d_value));
    free(h_in);
    free(h_steps);
    free(h_value);
    return result < 0 ? report_pass() : result;
}
