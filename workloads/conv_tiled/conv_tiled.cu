// Multi-channel 3x3 convolution (a convolution layer's forward pass, valid padding):
// out[k][y][x] = sum_c sum_dy sum_dx w[k][c][dy][dx] * in[c][y+dy][x+dx]. A CTA of 16x8
// threads computes a 16x32 output tile for four output channels. Per input channel it
// stages an 18x34 input tile in shared memory and loads the 36 weights of its four output
// channels into registers; each thread then reads 18 input values and issues 144 FFMAs
// whose three sources are all registers (input, weight, accumulator) into its 16
// accumulators (four rows, four channels): the inner loop of a tiled convolution.
#include "../common/workload.h"

#define TILE_X 16
#define TILE_Y 32
#define ROWS (TILE_Y / THREADS_Y)  // output rows per thread
#define THREADS_Y 8
#define KPER 4
#define IN_X (TILE_X + 2)
#define IN_Y (TILE_Y + 2)

// The host uses widths with (width - 2) a multiple of 16, (height - 2) of 32, K of 4.
__global__ void __launch_bounds__(TILE_X * THREADS_Y)
conv_tiled(const float* __restrict__ in, const float* __restrict__ w, float* __restrict__ out,
           int channels, int height, int width) {
    __shared__ float tile[IN_Y][IN_X];
    int tx = threadIdx.x, ty = threadIdx.y;
    int t = ty * TILE_X + tx;
    int x0 = blockIdx.x * TILE_X, y0 = blockIdx.y * TILE_Y;
    int k0 = blockIdx.z * KPER;
    int out_w = width - 2, out_h = height - 2;

    float acc[KPER][ROWS];
#pragma unroll
    for (int k = 0; k < KPER; ++k)
#pragma unroll
        for (int r = 0; r < ROWS; ++r) acc[k][r] = 0.0f;

    for (int c = 0; c < channels; ++c) {
        const float* plane = in + (size_t)c * height * width;
        for (int i = t; i < IN_X * IN_Y; i += TILE_X * THREADS_Y)
            tile[i / IN_X][i % IN_X] = plane[(size_t)(y0 + i / IN_X) * width + x0 + i % IN_X];
        float wr[KPER][9];
#pragma unroll
        for (int k = 0; k < KPER; ++k) {
#pragma unroll
            for (int j = 0; j < 9; ++j) wr[k][j] = w[((size_t)(k0 + k) * channels + c) * 9 + j];
        }
        __syncthreads();
#pragma unroll
        for (int dx = 0; dx < 3; ++dx) {
            float v[ROWS + 2];
#pragma unroll
            for (int r = 0; r < ROWS + 2; ++r) v[r] = tile[ROWS * ty + r][tx + dx];
#pragma unroll
            for (int dy = 0; dy < 3; ++dy) {
#pragma unroll
                for (int k = 0; k < KPER; ++k) {
#pragma unroll
                    for (int r = 0; r < ROWS; ++r)
                        acc[k][r] = fmaf(v[dy + r], wr[k][dy * 3 + dx], acc[k][r]);
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int k = 0; k < KPER; ++k) {
        float* o = out + (size_t)(k0 + k) * out_h * out_w;
#pragma unroll
        for (int r = 0; r < ROWS; ++r) o[(size_t)(y0 + ROWS * ty + r) * out_w + x0 + tx] = acc[k][r];
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int channels = large ? 32 : 8;
    int filters = large ? 32 : 8;
    int out_h = large ? 128 : 64, out_w = large ? 128 : 64;
    int height = out_h + 2, width = out_w + 2;

    size_t n_in = (size_t)channels * height * width;
    size_t n_w = (size_t)filters * channels * 9;
    size_t n_out = (size_t)filters * out_h * out_w;
    float* h_in = (float*)malloc(sizeof(float) * n_in);
    float* h_w = (float*)malloc(sizeof(float) * n_w);
    float* h_out = (float*)malloc(sizeof(float) * n_out);
    Lcg rng(33u);
    for (size_t i = 0; i < n_in; ++i) h_in[i] = rng.range(-1.0f, 1.0f);
    for (size_t i = 0; i < n_w; ++i) h_w[i] = rng.range(-0.5f, 0.5f);

    float *d_in, *d_w, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(float) * n_in));
    CUDA_CHECK(cudaMalloc(&d_w, sizeof(float) * n_w));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float) * n_out));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(float) * n_in, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_w, h_w, sizeof(float) * n_w, cudaMemcpyHostToDevice));
    dim3 block(TILE_X, THREADS_Y);
    dim3 grid(out_w / TILE_X, out_h / TILE_Y, filters / KPER);
    conv_tiled<<<grid, block>>>(d_in, d_w, d_out, channels, height, width);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_out, d_out, sizeof(float) * n_out, cudaMemcpyDeviceToHost));

    // 9 * channels products summed in float: error at most about 9 * channels * 2^-24
    // relative of sum |w * in| (1.7e-5 for 288 terms); 3e-5 of it bounds that.
    int result = -1;
    for (int k = 0; k < filters && result < 0; ++k)
        for (int y = 0; y < out_h && result < 0; ++y)
            for (int x = 0; x < out_w; ++x) {
                double ref = 0.0, mag = 0.0;
                for (int c = 0; c < channels; ++c)
                    for (int dy = 0; dy < 3; ++dy)
                        for (int dx = 0; dx < 3; ++dx) {
                            double p = (double)h_w[((size_t)k * channels + c) * 9 + dy * 3 + dx] *
                                       h_in[((size_t)c * height + y + dy) * width + x + dx];
                            ref += p;
                            mag += abs_d(p);
                        }
                double got = h_out[((size_t)k * out_h + y) * out_w + x];
                if (abs_d(got - ref) > 3e-5 * mag + 1e-6) {
                    result = report_fail("out[%d][%d][%d] = %.7g, expected %.7g", k, y, x, got, ref);
                    break;
                }
            }
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_w);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
