// 3x3 box filter of a 2D float image read through a texture object: the image lives in a
// CUDA array (cudaMallocArray, cudaMemcpy2DToArray), sampled with point filtering,
// unnormalized coordinates and clamp addressing, so the borders need no index
// arithmetic. One thread per output pixel in 16x16 CTAs; each texel is fetched by the
// nine threads around it, so most fetches hit the texture cache and its misses go to
// the L2 (the texture path of issue 28).
#include "../common/workload.h"

#define BLOCK_X 16
#define BLOCK_Y 16

__global__ void box3x3(cudaTextureObject_t image, float* __restrict__ out, int width,
                       int height) {
    int x = blockIdx.x * BLOCK_X + threadIdx.x;
    int y = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            // Texel centres are at +0.5; clamp addressing repeats the edge texels.
            sum += tex2D<float>(image, x + dx + 0.5f, y + dy + 0.5f);
        }
    }
    out[y * width + x] = sum * (1.0f / 9.0f);
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    // Sizes that are not multiples of the CTA, so edge CTAs have idle lanes.
    int width = large ? 1024 + 9 : 256 + 9;
    int height = large ? 1024 + 3 : 192 + 3;
    int pixels = width * height;

    Lcg rng(2828u);
    float* h_in = random_unit_floats(rng, pixels);
    float* h_out = (float*)malloc(sizeof(float) * pixels);

    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    CUDA_CHECK(cudaMallocArray(&array, &desc, width, height));
    CUDA_CHECK(cudaMemcpy2DToArray(array, 0, 0, h_in, sizeof(float) * width,
                                   sizeof(float) * width, height, cudaMemcpyHostToDevice));

    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaTextureDesc tex;
    memset(&tex, 0, sizeof(tex));
    tex.addressMode[0] = cudaAddressModeClamp;
    tex.addressMode[1] = cudaAddressModeClamp;
    tex.filterMode = cudaFilterModePoint;
    tex.readMode = cudaReadModeElementType;
    tex.normalizedCoords = 0;
    cudaTextureObject_t image;
    CUDA_CHECK(cudaCreateTextureObject(&image, &res, &tex, nullptr));

    float* d_out;
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float) * pixels));
    CUDA_CHECK(cudaMemset(d_out, 0xff, sizeof(float) * pixels));
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((width + BLOCK_X - 1) / BLOCK_X, (height + BLOCK_Y - 1) / BLOCK_Y);
    box3x3<<<grid, block>>>(image, d_out, width, height);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_out, d_out, sizeof(float) * pixels, cudaMemcpyDeviceToHost));

    // Nine non-negative terms summed in float, then one multiply: the error is below
    // 10 * 2^-24 of the sum, so 1e-6 relative with a small absolute floor.
    int result = -1;
    for (int y = 0; y < height && result < 0; ++y) {
        for (int x = 0; x < width && result < 0; ++x) {
            double ref = 0.0;
            for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) {
                    ref += h_in[clamp_i(y + dy, 0, height - 1) * width +
                                clamp_i(x + dx, 0, width - 1)];
                }
            }
            ref /= 9.0;
            double got = h_out[y * width + x];
            if (!(abs_d(got - ref) <= 1e-6 * ref + 1e-7)) {
                result = report_fail("out[%d][%d] = %.7g, expected %.7g", y, x, got, ref);
            }
        }
    }

    CUDA_CHECK(cudaDestroyTextureObject(image));
    CUDA_CHECK(cudaFreeArray(array));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return result < 0 ? report_pass() : result;
}
