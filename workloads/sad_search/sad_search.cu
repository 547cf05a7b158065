// Block-matching motion search: for every 4x4 block of the current frame, the sum of
// absolute differences (SAD) against the reference frame at every displacement within
// +-4 pixels, keeping the best. A thread owns one block and one vertical displacement: it
// holds the block's 16 pixels and the 4x12 reference strip it sweeps in registers (64
// values) and evaluates the nine horizontal displacements from them, so the kernel is
// integer arithmetic under heavy register pressure. The host reduces the nine rows of
// each block and checks SADs and displacements exactly.
#include "../common/workload.h"

#define R 4
#define SPAN (2 * R + 1)
#define STRIP (4 + 2 * R)
#define THREADS 128

// Frames are width x height bytes with a border of R pixels on every side that blocks do
// not start in (the host chooses sizes so every candidate is inside the frame).
__global__ void __launch_bounds__(THREADS)
sad_search(const unsigned char* __restrict__ cur, const unsigned char* __restrict__ ref,
           int* __restrict__ best_sad, int* __restrict__ best_dx, int width, int blocks_x,
           int nblocks) {
    int t = blockIdx.x * THREADS + threadIdx.x;
    if (t >= nblocks * SPAN) return;
    int block = t / SPAN;
    int dy = t % SPAN - R;
    int bx = R + 4 * (block % blocks_x);
    int by = R + 4 * (block / blocks_x);

    int c[4][4];
#pragma unroll
    for (int y = 0; y < 4; ++y)
#pragma unroll
        for (int x = 0; x < 4; ++x) c[y][x] = cur[(by + y) * width + bx + x];
    int s[4][STRIP];
#pragma unroll
    for (int y = 0; y < 4; ++y)
#pragma unroll
        for (int x = 0; x < STRIP; ++x) s[y][x] = ref[(by + dy + y) * width + bx - R + x];

    int best = 1 << 30, arg = 0;
#pragma unroll
    for (int d = 0; d < SPAN; ++d) {
        int sad = 0;
#pragma unroll
        for (int y = 0; y < 4; ++y)
#pragma unroll
            for (int x = 0; x < 4; ++x) sad += abs(c[y][x] - s[y][x + d]);
        if (sad < best) {
            best = sad;
            arg = d - R;
        }
    }
    best_sad[t] = best;
    best_dx[t] = arg;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int blocks_x = large ? 80 : 24, blocks_y = large ? 60 : 16;
    int width = 4 * blocks_x + 2 * R, height = 4 * blocks_y + 2 * R;
    int nblocks = blocks_x * blocks_y;
    int rows = nblocks * SPAN;

    unsigned char* h_cur = (unsigned char*)malloc(width * height);
    unsigned char* h_ref = (unsigned char*)malloc(width * height);
    Lcg rng(1234u);
    // The current frame is the reference shifted by a smooth motion plus noise, so the
    // best displacements vary and ties are rare.
    for (int i = 0; i < width * height; ++i) h_ref[i] = (unsigned char)rng.below(256);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            int sx = x + (y / 8) % 5 - 2, sy = y + (x / 12) % 3 - 1;
            sx = sx < 0 ? 0 : (sx >= width ? width - 1 : sx);
            sy = sy < 0 ? 0 : (sy >= height ? height - 1 : sy);
            int v = h_ref[sy * width + sx] + (int)rng.below(9) - 4;
            h_cur[y * width + x] = (unsigned char)(v < 0 ? 0 : (v > 255 ? 255 : v));
        }

    unsigned char *d_cur, *d_ref;
    int *d_sad, *d_dx;
    CUDA_CHECK(cudaMalloc(&d_cur, width * height));
    CUDA_CHECK(cudaMalloc(&d_ref, width * height));
    CUDA_CHECK(cudaMalloc(&d_sad, sizeof(int) * rows));
    CUDA_CHECK(cudaMalloc(&d_dx, sizeof(int) * rows));
    CUDA_CHECK(cudaMemcpy(d_cur, h_cur, width * height, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_ref, h_ref, width * height, cudaMemcpyHostToDevice));
    sad_search<<<(rows + THREADS - 1) / THREADS, THREADS>>>(d_cur, d_ref, d_sad, d_dx, width,
                                                           blocks_x, nblocks);
    CUDA_CHECK_LAUNCH();
    int* h_sad = (int*)malloc(sizeof(int) * rows);
    int* h_dx = (int*)malloc(sizeof(int) * rows);
    CUDA_CHECK(cudaMemcpy(h_sad, d_sad, sizeof(int) * rows, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_dx, d_dx, sizeof(int) * rows, cudaMemcpyDeviceToHost));

    int result = -1;
    int moved = 0;
    for (int b = 0; b < nblocks && result < 0; ++b) {
        int bx = R + 4 * (b % blocks_x), by = R + 4 * (b / blocks_x);
        int block_best = 1 << 30, block_arg = 0, got_best = 1 << 30, got_arg = 0;
        for (int dy = -R; dy <= R && result < 0; ++dy) {
            int best = 1 << 30, arg = 0;
            for (int dx = -R; dx <= R; ++dx) {
                int sad = 0;
                for (int y = 0; y < 4; ++y)
                    for (int x = 0; x < 4; ++x)
                        sad += abs(h_cur[(by + y) * width + bx + x] -
                                   h_ref[(by + dy + y) * width + bx + dx + x]);
                if (sad < best) {
                    best = sad;
                    arg = dx;
                }
            }
            int row = b * SPAN + dy + R;
            if (h_sad[row] != best || h_dx[row] != arg) {
                result = report_fail("block %d dy %d: SAD %d at dx %d, expected %d at %d", b, dy,
                                     h_sad[row], h_dx[row], best, arg);
            }
            if (best < block_best) {
                block_best = best;
                block_arg = (dy + R) * SPAN + arg + R;
            }
            if (h_sad[row] < got_best) {
                got_best = h_sad[row];
                got_arg = (dy + R) * SPAN + h_dx[row] + R;
            }
        }
        if (result < 0 && got_arg != block_arg)
            result = report_fail("block %d: best displacement differs", b);
        if (block_arg != R * SPAN + R) ++moved;
    }
    // The motion field moves most blocks; a search that found nothing would not.
    if (result < 0 && moved < nblocks / 2)
        result = report_fail("only %d of %d blocks moved", moved, nblocks);
    CUDA_CHECK(cudaFree(d_cur));
    CUDA_CHECK(cudaFree(d_ref));
    CUDA_CHECK(cudaFree(d_sad));
    CUDA_CHECK(cudaFree(d_dx));
    free(h_cur);
    free(h_ref);
    free(h_sad);
    free(h_dx);
    return result < 0 ? report_pass() : result;
}
