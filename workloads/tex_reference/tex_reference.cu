// Image resampling through a legacy texture reference: a 2D float image in pitched
// linear memory (cudaMallocPitch, cudaMemcpy2D) bound with cudaBindTexture2D, read with
// bilinear filtering and clamp addressing at a quarter-texel shift, in three passes
// (ping-pong: each pass resamples the previous output, rebinding the reference). The
// shift is exact in the hardware's 8-bit filter weights, so the host reference uses the
// same weights. One thread per output pixel in 32x8 CTAs; neighbouring threads share
// texels, so fetches hit the texture cache and its misses go to the L2 (issue 28).
#include "../common/workload.h"

// Texture references are deprecated since CUDA 11 (removed in 12) but real programs
// still use them; this workload exists to run one, so the warnings say nothing new.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma nv_diag_suppress 1215

#define BLOCK_X 32
#define BLOCK_Y 8
#define PASSES 3

texture<float, cudaTextureType2D, cudaReadModeElementType> image;

__global__ void shift_quarter(float* __restrict__ out, size_t out_pitch, int width,
                              int height) {
    int x = blockIdx.x * BLOCK_X + threadIdx.x;
    int y = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (x >= width || y >= height) return;
    // Texel centres are at +0.5: sampling at +0.75 weighs texels x and x+1 as 3:1.
    float v = tex2D(image, x + 0.75f, y + 0.75f);
    float* row = (float*)((char*)out + y * out_pitch);
    row[x] = v;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int width = large ? 1024 + 17 : 320 + 17;
    int height = large ? 1024 + 5 : 160 + 5;
    int pixels = width * height;

    Lcg rng(4141u);
    float* h_ref = random_unit_floats(rng, pixels);
    float* h_next = (float*)malloc(sizeof(float) * pixels);
    float* h_out = (float*)malloc(sizeof(float) * pixels);

    float* d_buf[2];
    size_t pitch[2];
    for (int b = 0; b < 2; ++b) {
        CUDA_CHECK(cudaMallocPitch((void**)&d_buf[b], &pitch[b], sizeof(float) * width, height));
    }
    CUDA_CHECK(cudaMemcpy2D(d_buf[0], pitch[0], h_ref, sizeof(float) * width,
                            sizeof(float) * width, height, cudaMemcpyHostToDevice));

    image.addressMode[0] = cudaAddressModeClamp;
    image.addressMode[1] = cudaAddressModeClamp;
    image.filterMode = cudaFilterModeLinear;
    image.normalized = false;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((width + BLOCK_X - 1) / BLOCK_X, (height + BLOCK_Y - 1) / BLOCK_Y);
    for (int p = 0; p < PASSES; ++p) {
        int src = p % 2, dst = 1 - src;
        size_t offset = 0;
        CUDA_CHECK(cudaBindTexture2D(&offset, image, d_buf[src], desc, width, height, pitch[src]));
        if (offset != 0) {
            return report_fail("cudaBindTexture2D offset %zu, expected 0", offset);
        }
        shift_quarter<<<grid, block>>>(d_buf[dst], pitch[dst], width, height);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaUnbindTexture(image));
    }
    CUDA_CHECK(cudaMemcpy2D(h_out, sizeof(float) * width, d_buf[PASSES % 2], pitch[PASSES % 2],
                            sizeof(float) * width, height, cudaMemcpyDeviceToHost));

    // The host applies the same passes with weights 3/4 and 1/4 in each direction (exact
    // in 8 fractional bits) in double: each pass's float result differs from it by a few
    // ulps of values in [0, 1), so 1e-5 absolute after three passes.
    for (int p = 0; p < PASSES; ++p) {
        for (int y = 0; y < height; ++y) {
            int y1 = clamp_i(y + 1, 0, height - 1);
            for (int x = 0; x < width; ++x) {
                int x1 = clamp_i(x + 1, 0, width - 1);
                double top = 0.75 * h_ref[y * width + x] + 0.25 * h_ref[y * width + x1];
                double bottom = 0.75 * h_ref[y1 * width + x] + 0.25 * h_ref[y1 * width + x1];
                h_next[y * width + x] = (float)(0.75 * top + 0.25 * bottom);
            }
        }
        float* t = h_ref;
        h_ref = h_next;
        h_next = t;
    }
    int result = -1;
    for (int i = 0; i < pixels && result < 0; ++i) {
        if (!(abs_d((double)h_out[i] - (double)h_ref[i]) <= 1e-5)) {
            result = report_fail("out[%d][%d] = %.7g, expected %.7g", i / width, i % width,
                                 h_out[i], h_ref[i]);
        }
    }

    for (int b = 0; b < 2; ++b) CUDA_CHECK(cudaFree(d_buf[b]));
    free(h_ref);
    free(h_next);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
