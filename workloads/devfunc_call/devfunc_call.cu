// Real device-function calls. The helpers are __noinline__, so the PTX keeps them as
// .func with call instructions, parameter passing and return values: an integer mixer
// with a data-dependent loop, a window sum that returns one result and writes a second
// through a pointer to the caller's local variable, a float helper, and a two-level call
// chain (hash_pair calls mix_rounds twice). The host runs the very same functions as the
// reference.
#include "../common/workload.h"

__host__ __device__ __noinline__ uint32_t rotate_left(uint32_t x, int k) {
    return (x << k) | (x >> (32 - k));
}

__host__ __device__ __noinline__ uint32_t mix_rounds(uint32_t a, uint32_t b, uint32_t c, int rounds) {
    for (int r = 0; r < rounds; ++r) {
        a += b;
        c ^= a;
        c = rotate_left(c, 13);
        b += c;
        a ^= b;
        a = rotate_left(a, 7);
        c += a * 0x2545f491u;
    }
    return a ^ b ^ c;
}

__host__ __device__ __noinline__ uint32_t hash_pair(uint32_t key, uint32_t index) {
    uint32_t first = mix_rounds(key, index, 0x9e3779b9u, 3 + (int)(index & 3));
    return mix_rounds(first, key, index, 2);
}

// Sums values[start .. start+count) with each value clamped to [lo, hi]; returns the sum
// and stores the number of clamped values in *clipped.
__host__ __device__ __noinline__ int clamped_window_sum(const int* values, int start, int count,
                                                        int lo, int hi, int* clipped) {
    int sum = 0;
    int clipped_count = 0;
    for (int i = 0; i < count; ++i) {
        int v = values[start + i];
        if (v < lo) {
            v = lo;
            ++clipped_count;
        } else if (v > hi) {
            v = hi;
            ++clipped_count;
        }
        sum += v;
    }
    *clipped = clipped_count;
    return sum;
}

__host__ __device__ __noinline__ float blend(float a, float b, float weight, uint32_t bits) {
    float t = (float)(bits & 1023u) * (1.0f / 1023.0f);
    return a + (b - a) * t * weight;
}

#define WINDOW_MAX 16

__global__ void devfunc_kernel(const int* __restrict__ values, const uint32_t* __restrict__ keys, int n,
                               uint32_t* __restrict__ hashes, int* __restrict__ sums,
                               int* __restrict__ clips, float* __restrict__ scores) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t h = hash_pair(keys[i], (uint32_t)i);
    int window = 1 + (int)(h % WINDOW_MAX);
    int start = i < n - WINDOW_MAX ? i : n - WINDOW_MAX;
    int clipped;
    int sum = clamped_window_sum(values, start, window, -20, 20, &clipped);
    hashes[i] = h;
    sums[i] = sum;
    clips[i] = clipped;
    scores[i] = blend((float)sum, (float)clipped, 0.75f, h);
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 131072 + 3 : 8192 + 3;
    const int threads = 128;

    int* h_values = (int*)malloc(sizeof(int) * n);
    uint32_t* h_keys = (uint32_t*)malloc(sizeof(uint32_t) * n);
    uint32_t* h_hashes = (uint32_t*)malloc(sizeof(uint32_t) * n);
    int* h_sums = (int*)malloc(sizeof(int) * n);
    int* h_clips = (int*)malloc(sizeof(int) * n);
    float* h_scores = (float*)malloc(sizeof(float) * n);
    Lcg rng(60606u);
    for (int i = 0; i < n; ++i) {
        h_values[i] = (int)rng.below(61) - 30;
        h_keys[i] = rng.next();
    }

    int *d_values, *d_sums, *d_clips;
    uint32_t *d_keys, *d_hashes;
    float* d_scores;
    CUDA_CHECK(cudaMalloc(&d_values, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_keys, sizeof(uint32_t) * n));
    CUDA_CHECK(cudaMalloc(&d_hashes, sizeof(uint32_t) * n));
    CUDA_CHECK(cudaMalloc(&d_sums, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_clips, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_scores, sizeof(float) * n));
    CUDA_CHECK(cudaMemcpy(d_values, h_values, sizeof(int) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_keys, h_keys, sizeof(uint32_t) * n, cudaMemcpyHostToDevice));

    devfunc_kernel<<<(n + threads - 1) / threads, threads>>>(d_values, d_keys, n, d_hashes, d_sums,
                                                               d_clips, d_scores);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_hashes, d_hashes, sizeof(uint32_t) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_sums, d_sums, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_clips, d_clips, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_scores, d_scores, sizeof(float) * n, cudaMemcpyDeviceToHost));

    int result = -1;
    for (int i = 0; i < n; ++i) {
        uint32_t h = hash_pair(h_keys[i], (uint32_t)i);
        int window = 1 + (int)(h % WINDOW_MAX);
        int start = i < n - WINDOW_MAX ? i : n - WINDOW_MAX;
        int clipped;
        int sum = clamped_window_sum(h_values, start, window, -20, 20, &clipped);
        float score = blend((float)sum, (float)clipped, 0.75f, h);
        if (h_hashes[i] != h) {
            result = report_fail("hash[%d] = %08x, expected %08x", i, h_hashes[i], h);
            break;
        }
        if (h_sums[i] != sum || h_clips[i] != clipped) {
            result = report_fail("window %d: sum %d clipped %d, expected %d and %d", i, h_sums[i],
                                 h_clips[i], sum, clipped);
            break;
        }
        // The device may fuse the multiply-add in blend; |sum| <= 320.
        if (abs_d((double)h_scores[i] - (double)score) > 1e-4) {
            result = report_fail("score[%d] = %.7g, expected %.7g", i, (double)h_scores[i], (double)score);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_values));
    CUDA_CHECK(cudaFree(d_keys));
    CUDA_CHECK(cudaFree(d_hashes));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_clips));
    CUDA_CHECK(cudaFree(d_scores));
    free(h_values);
    free(h_keys);
    free(h_hashes);
    free(h_sums);
    free(h_clips);
    free(h_scores);
    return result < 0 ? report_pass() : result;
}
