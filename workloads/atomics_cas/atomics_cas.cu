// Global atomics under heavy contention (20000 updates into 16 buckets): atomicMin,
// atomicMax, atomicAdd, atomicOr, atomicXor, atomicInc with wrap-around, atomicExch
// (pushing each element onto a per-bucket linked list) and an atomicCAS retry loop that
// implements an atomic multiply modulo a prime. Every result is order-independent, so
// the host can check it exactly; the linked lists are checked as sets.
#include "../common/workload.h"

#define BUCKETS 16
#define PRIME 1000003u
#define RING 1000u  // atomicInc wraps the counter back to 0 after RING - 1

__device__ unsigned atomic_mul_mod(unsigned* address, unsigned factor) {
    unsigned old = *address;
    unsigned assumed;
    do {
        assumed = old;
        unsigned product = (unsigned)(((unsigned long long)assumed * factor) % PRIME);
        old = atomicCAS(address, assumed, product);
    } while (old != assumed);
    return old;
}

struct BucketState {
    int min_value[BUCKETS];
    int max_value[BUCKETS];
    unsigned count[BUCKETS];
    unsigned or_bits[BUCKETS];
    unsigned xor_bits[BUCKETS];
    unsigned product[BUCKETS];
    int head[BUCKETS];  // -1 terminates a list
    unsigned ring_counter;
};

__global__ void atomics_kernel(const int* __restrict__ in, int n, BucketState* state, int* __restrict__ next) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    int b = v % BUCKETS;
    atomicMin(&state->min_value[b], v);
    atomicMax(&state->max_value[b], v);
    atomicAdd(&state->count[b], 1u);
    atomicOr(&state->or_bits[b], 1u << (v / BUCKETS % 32));
    atomicXor(&state->xor_bits[b], (unsigned)v * 2654435761u);
    atomic_mul_mod(&state->product[b], (unsigned)(v % 1000) + 2u);
    atomicInc(&state->ring_counter, RING - 1);
    next[i] = atomicExch(&state->head[b], i);
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 320000 : 20000;
    const int threads = 256;

    int* h_in = (int*)malloc(sizeof(int) * n);
    int* h_next = (int*)malloc(sizeof(int) * n);
    Lcg rng(424242u);
    for (int i = 0; i < n; ++i) h_in[i] = (int)rng.below(1000000);

    BucketState init, ref, got;
    for (int b = 0; b < BUCKETS; ++b) {
        init.min_value[b] = 2147483647;
        init.max_value[b] = -1;
        init.count[b] = 0;
        init.or_bits[b] = 0;
        init.xor_bits[b] = 0;
        init.product[b] = 1;
        init.head[b] = -1;
    }
    init.ring_counter = 0;

    int *d_in, *d_next;
    BucketState* d_state;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_next, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_state, sizeof(BucketState)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(int) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_state, &init, sizeof(BucketState), cudaMemcpyHostToDevice));

    atomics_kernel<<<(n + threads - 1) / threads, threads>>>(d_in, n, d_state, d_next);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(&got, d_state, sizeof(BucketState), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_next, d_next, sizeof(int) * n, cudaMemcpyDeviceToHost));

    ref = init;
    for (int i = 0; i < n; ++i) {
        int v = h_in[i];
        int b = v % BUCKETS;
        if (v < ref.min_value[b]) ref.min_value[b] = v;
        if (v > ref.max_value[b]) ref.max_value[b] = v;
        ref.count[b]++;
        ref.or_bits[b] |= 1u << (v / BUCKETS % 32);
        ref.xor_bits[b] ^= (unsigned)v * 2654435761u;
        ref.product[b] = (unsigned)(((unsigned long long)ref.product[b] * ((unsigned)(v % 1000) + 2u)) % PRIME);
    }
    ref.ring_counter = (unsigned)n % RING;

    int result = -1;
    for (int b = 0; b < BUCKETS && result < 0; ++b) {
        if (got.min_value[b] != ref.min_value[b] || got.max_value[b] != ref.max_value[b]) {
            result = report_fail("bucket %d: min/max %d/%d, expected %d/%d", b, got.min_value[b],
                                 got.max_value[b], ref.min_value[b], ref.max_value[b]);
        } else if (got.count[b] != ref.count[b]) {
            result = report_fail("bucket %d: count %u, expected %u", b, got.count[b], ref.count[b]);
        } else if (got.or_bits[b] != ref.or_bits[b] || got.xor_bits[b] != ref.xor_bits[b]) {
            result = report_fail("bucket %d: or/xor %08x/%08x, expected %08x/%08x", b, got.or_bits[b],
                                 got.xor_bits[b], ref.or_bits[b], ref.xor_bits[b]);
        } else if (got.product[b] != ref.product[b]) {
            result = report_fail("bucket %d: product %u, expected %u", b, got.product[b], ref.product[b]);
        }
    }
    if (result < 0 && got.ring_counter != ref.ring_counter) {
        result = report_fail("ring counter %u, expected %u", got.ring_counter, ref.ring_counter);
    }

    // Every element must appear exactly once, in its own bucket's list.
    char* seen = (char*)calloc(n, 1);
    for (int b = 0; b < BUCKETS && result < 0; ++b) {
        unsigned length = 0;
        for (int i = got.head[b]; i != -1 && result < 0; i = h_next[i]) {
            if (i < 0 || i >= n) {
                result = report_fail("bucket %d: list holds out-of-range index %d", b, i);
            } else if (seen[i]) {
                result = report_fail("bucket %d: element %d listed twice", b, i);
            } else if (h_in[i] % BUCKETS != b) {
                result = report_fail("bucket %d: element %d belongs to bucket %d", b, i, h_in[i] % BUCKETS);
            } else {
                seen[i] = 1;
                ++length;
            }
        }
        if (result < 0 && length != ref.count[b]) {
            result = report_fail("bucket %d: list has %u elements, expected %u", b, length, ref.count[b]);
        }
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_next));
    CUDA_CHECK(cudaFree(d_state));
    free(h_in);
    free(h_next);
    free(seen);
    return result < 0 ? report_pass() : result;
}
