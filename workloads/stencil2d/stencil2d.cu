// Jacobi iterations of a 5-point stencil on a 2D grid, ping-ponging between two buffers
// (one launch per iteration). Boundary cells are copied unchanged, so the threads on the
// grid edge take a different path from the interior ones.
#include "../common/workload.h"

#define BLOCK_X 16
#define BLOCK_Y 16

__global__ void stencil5(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
    int x = blockIdx.x * BLOCK_X + threadIdx.x;
    int y = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (x >= width || y >= height) return;
    int i = y * width + x;
    if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
        out[i] = in[i];
    } else {
        float neighbours = in[i - width] + in[i + width] + in[i - 1] + in[i + 1];
        out[i] = 0.5f * in[i] + 0.125f * neighbours;
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int width = large ? 520 : 130;
    int height = large ? 390 : 98;
    const int iterations = 8;
    int cells = width * height;

    float* h_grid = (float*)malloc(sizeof(float) * cells);
    float* h_out = (float*)malloc(sizeof(float) * cells);
    Lcg rng(555u);
    for (int i = 0; i < cells; ++i) h_grid[i] = rng.unit();

    float *d_a, *d_b;
    CUDA_CHECK(cudaMalloc(&d_a, sizeof(float) * cells));
    CUDA_CHECK(cudaMalloc(&d_b, sizeof(float) * cells));
    CUDA_CHECK(cudaMemcpy(d_a, h_grid, sizeof(float) * cells, cudaMemcpyHostToDevice));

    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((width + BLOCK_X - 1) / BLOCK_X, (height + BLOCK_Y - 1) / BLOCK_Y);
    for (int it = 0; it < iterations; ++it) {
        stencil5<<<grid, block>>>(d_a, d_b, width, height);
        CUDA_CHECK_LAUNCH();
        float* tmp = d_a;
        d_a = d_b;
        d_b = tmp;
    }
    // After the swap d_a holds the latest iteration.
    CUDA_CHECK(cudaMemcpy(h_out, d_a, sizeof(float) * cells, cudaMemcpyDeviceToHost));

    float* ref = (float*)malloc(sizeof(float) * cells);
    float* next = (float*)malloc(sizeof(float) * cells);
    memcpy(ref, h_grid, sizeof(float) * cells);
    for (int it = 0; it < iterations; ++it) {
        for (int y = 0; y < height; ++y) {
            for (int x = 0; x < width; ++x) {
                int i = y * width + x;
                if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
                    next[i] = ref[i];
                } else {
                    float neighbours = ref[i - width] + ref[i + width] + ref[i - 1] + ref[i + 1];
                    next[i] = 0.5f * ref[i] + 0.125f * neighbours;
                }
            }
        }
        float* tmp = ref;
        ref = next;
        next = tmp;
    }

    // Values stay in [0, 1]; the device may contract multiply-adds, a few ulps per step.
    int result = -1;
    for (int i = 0; i < cells; ++i) {
        if (abs_d((double)h_out[i] - (double)ref[i]) > 1e-5) {
            result = report_fail("cell (%d, %d) = %.7g, expected %.7g", i % width, i / width,
                                 (double)h_out[i], (double)ref[i]);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    free(h_grid);
    free(h_out);
    free(ref);
    free(next);
    return result < 0 ? report_pass() : result;
}
