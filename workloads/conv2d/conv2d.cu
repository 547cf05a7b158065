// 3x3 convolution of a large single-channel float image, one thread per output pixel in
// 16x16 CTAs, the filter in __constant__ memory, clamp-to-edge borders. Nine loads per
// thread, each row of them shared with the neighbouring rows' threads through the L1D:
// the case of issue 8 (a 3x3 convolution over a large image; interconnect pressure).
#include "../common/workload.h"

#define BLOCK_X 16
#define BLOCK_Y 16

__constant__ float filter[9];

__global__ void conv3x3(const float* __restrict__ in, float* __restrict__ out, int width,
                        int height) {
    int x = blockIdx.x * BLOCK_X + threadIdx.x;
    int y = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; ++dy) {
        int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            sum += filter[(dy + 1) * 3 + (dx + 1)] * in[yy * width + xx];
        }
    }
    out[y * width + x] = sum;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    // Widths that are not a multiple of the CTA width, so edge CTAs have idle lanes.
    int width = large ? 2048 + 8 : 384 + 8;
    int height = large ? 2048 + 5 : 288 + 5;
    int pixels = width * height;

    Lcg rng(3333u);
    float h_filter[9];
    for (int i = 0; i < 9; ++i) h_filter[i] = rng.range(-1.0f, 1.0f);
    float* h_in = (float*)malloc(sizeof(float) * pixels);
    float* h_out = (float*)malloc(sizeof(float) * pixels);
    for (int i = 0; i < pixels; ++i) h_in[i] = rng.unit();

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, sizeof(float) * pixels));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float) * pixels));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, sizeof(float) * pixels, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(filter, h_filter, sizeof(h_filter)));
    CUDA_CHECK(cudaMemset(d_out, 0xff, sizeof(float) * pixels));

    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((width + BLOCK_X - 1) / BLOCK_X, (height + BLOCK_Y - 1) / BLOCK_Y);
    conv3x3<<<grid, block>>>(d_in, d_out, width, height);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_out, d_out, sizeof(float) * pixels, cudaMemcpyDeviceToHost));

    // Nine products summed in float: the error is below 9 * 2^-24 * sum|f*p| < 1e-6 * sum|f*p|.
    int result = -1;
    for (int y = 0; y < height && result < 0; ++y) {
        for (int x = 0; x < width && result < 0; ++x) {
            double ref = 0.0, mag = 0.0;
            for (int dy = -1; dy <= 1; ++dy) {
                int yy = y + dy < 0 ? 0 : (y + dy >= height ? height - 1 : y + dy);
                for (int dx = -1; dx <= 1; ++dx) {
                    int xx = x + dx < 0 ? 0 : (x + dx >= width ? width - 1 : x + dx);
                    double p = (double)h_filter[(dy + 1) * 3 + dx + 1] * (double)h_in[yy * width + xx];
                    ref += p;
                    mag += abs_d(p);
                }
            }
            double got = h_out[y * width + x];
            if (!(abs_d(got - ref) <= 2e-6 * mag + 1e-7)) {
                result = report_fail("out[%d][%d] = %.7g, expected %.7g", y, x, got, ref);
            }
        }
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
