// Warp-level primitives: a shuffle-down tree sum, a shuffle-xor butterfly maximum, a
// shuffle-up inclusive scan, a broadcast shuffle, a shuffle within 8-lane segments
// (width argument), ballot + popc, any/all votes, __activemask inside a divergent
// branch and __syncwarp. The element count leaves the last warps partly or wholly out
// of range; those lanes still take part in every shuffle with a neutral value.
#include "../common/workload.h"

#define FULL_MASK 0xffffffffu
#define WARP_RESULTS 8
#define INT_MIN_VALUE (-2147483647 - 1)

__global__ void warp_ops(const int* __restrict__ in, int n, int* __restrict__ scan_out,
                         int* __restrict__ segment_out, int* __restrict__ warp_out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = i >> 5;  // blockDim.x is a multiple of 32
    bool valid = i < n;
    int v = valid ? in[i] : 0;

    int sum = v;
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(FULL_MASK, sum, offset);

    int max_value = valid ? v : INT_MIN_VALUE;
    for (int offset = 16; offset > 0; offset >>= 1) {
        max_value = max(max_value, __shfl_xor_sync(FULL_MASK, max_value, offset));
    }

    int scan = v;
    for (int offset = 1; offset < 32; offset <<= 1) {
        int from_below = __shfl_up_sync(FULL_MASK, scan, offset);
        if (lane >= offset) scan += from_below;
    }

    int segment_sum = v;
    for (int offset = 4; offset > 0; offset >>= 1) {
        segment_sum += __shfl_xor_sync(FULL_MASK, segment_sum, offset, 8);
    }

    int broadcast = __shfl_sync(FULL_MASK, v, warp & 31);
    unsigned positive = __ballot_sync(FULL_MASK, valid && v > 0);
    int positive_count = __popc(positive);
    int any_large = __any_sync(FULL_MASK, v > 900);
    int all_valid = __all_sync(FULL_MASK, valid);

    // Inside the branch only lanes with an odd value can be active: the mask must be a
    // subset of those lanes and contain the calling lane. (Independent thread scheduling
    // may split the branch further, so equality is not required.)
    unsigned odd_lanes = __ballot_sync(FULL_MASK, (v & 1) != 0);
    bool mask_ok = true;
    if (v & 1) {
        unsigned active = __activemask();
        mask_ok = (active & ~odd_lanes) == 0 && ((active >> lane) & 1) != 0;
    }
    __syncwarp();
    int all_masks_ok = __all_sync(FULL_MASK, mask_ok);

    if (valid) {
        scan_out[i] = scan;
        segment_out[i] = segment_sum;
    }
    if (lane == 0) {
        int* out = warp_out + warp * WARP_RESULTS;
        out[0] = sum;
        out[1] = max_value;
        out[2] = broadcast;
        out[3] = (int)positive;
        out[4] = positive_count;
        out[5] = any_large;
        out[6] = all_valid;
        out[7] = all_masks_ok;
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? (1 << 19) + 20 : (1 << 15) + 20;
    const int threads = 128;
    int blocks = (n + threads - 1) / threads;
    int warps = blocks * threads / 32;

    int* h_in = (int*)malloc(sizeof(int) * n);
    int* h_scan = (int*)malloc(sizeof(int) * n);
    int* h_segment = (int*)malloc(sizeof(int) * n);
    int* h_warp = (int*)malloc(sizeof(int) * warps * WARP_RESULTS);
    Lcg rng(8675309u);
    for (int i = 0; i < n; ++i) h_in[i] = (int)rng.below(2001) - 1000;

    int *d_in, *d_scan, *d_segment, *d_warp;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_scan, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_segment, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_warp, sizeof(int) * warps * WARP_RESULTS));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(int) * n, cudaMemcpyHostToDevice));

    warp_ops<<<blocks, threads>>>(d_in, n, d_scan, d_segment, d_warp);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_scan, d_scan, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_segment, d_segment, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_warp, d_warp, sizeof(int) * warps * WARP_RESULTS, cudaMemcpyDeviceToHost));

    static const char* names[WARP_RESULTS] = {"sum", "max", "broadcast", "ballot",
                                              "popc", "any", "all", "activemask"};
    int result = -1;
    for (int w = 0; w < warps && result < 0; ++w) {
        int vals[32];
        bool valid[32];
        for (int l = 0; l < 32; ++l) {
            int i = w * 32 + l;
            valid[l] = i < n;
            vals[l] = valid[l] ? h_in[i] : 0;
        }
        int expect[WARP_RESULTS] = {0, INT_MIN_VALUE, vals[w & 31], 0, 0, 0, 1, 1};
        int running = 0;
        for (int l = 0; l < 32; ++l) {
            expect[0] += vals[l];
            if (valid[l] && vals[l] > expect[1]) expect[1] = vals[l];
            if (valid[l] && vals[l] > 0) {
                expect[3] = (int)((unsigned)expect[3] | (1u << l));
                expect[4]++;
            }
            if (vals[l] > 900) expect[5] = 1;
            if (!valid[l]) expect[6] = 0;

            running += vals[l];
            int seg_base = l & ~7;
            int seg = 0;
            for (int k = 0; k < 8; ++k) seg += vals[seg_base + k];
            int i = w * 32 + l;
            if (valid[l] && h_scan[i] != running) {
                result = report_fail("scan[%d] = %d, expected %d", i, h_scan[i], running);
                break;
            }
            if (valid[l] && h_segment[i] != seg) {
                result = report_fail("segment[%d] = %d, expected %d", i, h_segment[i], seg);
                break;
            }
        }
        for (int r = 0; r < WARP_RESULTS && result < 0; ++r) {
            int got = h_warp[w * WARP_RESULTS + r];
            if (got != expect[r]) {
                result = report_fail("warp %d %s = %d, expected %d", w, names[r], got, expect[r]);
            }
        }
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_scan));
    CUDA_CHECK(cudaFree(d_segment));
    CUDA_CHECK(cudaFree(d_warp));
    free(h_in);
    free(h_scan);
    free(h_segment);
    free(h_warp);
    return result < 0 ? report_pass() : result;
}
