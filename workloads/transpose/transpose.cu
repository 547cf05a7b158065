// Matrix transpose three ways: a naive kernel (coalesced reads, strided writes) and a
// 32x32 shared-memory tile kernel instantiated twice from a template, once with a
// 32-float row (every column read of the tile hits one bank: 32-way conflicts) and once
// padded to 33 floats (conflict-free). The matrix is not a multiple of the tile in
// either dimension.
#include "../common/workload.h"

#define TILE 32
#define TILE_ROWS 8  // threads per tile column: each thread moves TILE / TILE_ROWS elements

__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += TILE_ROWS) {
        if (x < width && y + j < height) out[x * height + y + j] = in[(y + j) * width + x];
    }
}

template <int PAD>
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
    __shared__ float tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += TILE_ROWS) {
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }
    __syncthreads();
    // Swap the block coordinates so that the writes are coalesced too.
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += TILE_ROWS) {
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

static int check(const char* name, const float* in, const float* out, int width, int height) {
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            float expected = in[y * width + x];
            float got = out[x * height + y];
            if (got != expected) {
                return report_fail("%s: out[%d][%d] = %.7g, expected %.7g", name, x, y, (double)got,
                                   (double)expected);
            }
        }
    }
    return -1;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int width = large ? 1000 : 250;
    int height = large ? 760 : 190;
    int cells = width * height;

    float* h_in = (float*)malloc(sizeof(float) * cells);
    float* h_out = (float*)malloc(sizeof(float) * cells);
    Lcg rng(1618u);
    for (int i = 0; i < cells; ++i) h_in[i] = rng.range(-100.0f, 100.0f);

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(float) * cells));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float) * cells));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(float) * cells, cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE_ROWS);
    dim3 grid((width + TILE - 1) / TILE, (height + TILE - 1) / TILE);
    int result = -1;
    for (int variant = 0; variant < 3 && result < 0; ++variant) {
        // A NaN sentinel (all bits set) exposes any element a kernel fails to write.
        CUDA_CHECK(cudaMemset(d_out, 0xff, sizeof(float) * cells));
        const char* name;
        if (variant == 0) {
            name = "naive";
            transpose_naive<<<grid, block>>>(d_in, d_out, width, height);
        } else if (variant == 1) {
            name = "tiled (bank conflicts)";
            transpose_tiled<0><<<grid, block>>>(d_in, d_out, width, height);
        } else {
            name = "tiled (padded)";
            transpose_tiled<1><<<grid, block>>>(d_in, d_out, width, height);
        }
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(h_out, d_out, sizeof(float) * cells, cudaMemcpyDeviceToHost));
        result = check(name, h_in, h_out, width, height);
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
