// Textures through the runtime into the emulator: legacy references bound to linear
// memory (1D fetch, normalized-float reads of bytes) and to a CUDA array (2D, linear
// filtering, clamping), and a texture object over pitched memory (wrap addressing,
// normalized coordinates). Sample points sit where the filter weights are exact, so the
// expected values are exact too. Prints one line per failed check and `PASS` at the end.
#include <cstdio>
#include <cuda_runtime.h>

texture<float, 1, cudaReadModeElementType> tex_lin;
texture<unsigned char, 1, cudaReadModeNormalizedFloat> tex_bytes;
texture<float, 2, cudaReadModeElementType> tex_array;

__global__ void fetch_1d(float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = tex1Dfetch(tex_lin, i) + tex1Dfetch(tex_bytes, i);
}

// Linear filtering: texel centres sit at +0.5, so x = i + 1 is halfway between i and i + 1.
__global__ void sample_2d(float* out, int w) {
    int x = threadIdx.x, y = threadIdx.y;
    out[y * w + x] = tex2D(tex_array, x + 1.0f, y + 0.5f);
}

__global__ void sample_object(cudaTextureObject_t t, float* out, int w, int h) {
    int x = threadIdx.x, y = threadIdx.y;
    // One texel past the right edge wraps to column 0.
    float u = (x + 1 + 0.5f) / w, v = (y + 0.5f) / h;
    out[y * blockDim.x + x] = tex2D<float>(t, u, v);
}

static int failures = 0;
#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            printf("FAIL line %d: %s\n", __LINE__, #cond);             \
            ++failures;                                                \
        }                                                              \
    } while (0)

int main() {
    // 1D: float texels plus bytes read as normalized floats (255 -> 1.0).
    const int n = 32;
    float lin_host[n];
    unsigned char bytes_host[n];
    for (int i = 0; i < n; ++i) {
        lin_host[i] = 10.0f * i;
        bytes_host[i] = (i % 2) ? 255 : 0;
    }
    float *lin, *out;
    unsigned char* bytes;
    CHECK(cudaMalloc(&lin, sizeof lin_host) == cudaSuccess);
    CHECK(cudaMalloc(&bytes, sizeof bytes_host) == cudaSuccess);
    CHECK(cudaMalloc(&out, 64 * sizeof(float)) == cudaSuccess);
    cudaMemcpy(lin, lin_host, sizeof lin_host, cudaMemcpyHostToDevice);
    cudaMemcpy(bytes, bytes_host, sizeof bytes_host, cudaMemcpyHostToDevice);
    CHECK(cudaBindTexture(nullptr, tex_lin, lin, sizeof lin_host) == cudaSuccess);
    CHECK(cudaBindTexture(nullptr, tex_bytes, bytes, sizeof bytes_host) == cudaSuccess);
    fetch_1d<<<1, n>>>(out, n);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    float res[64];
    cudaMemcpy(res, out, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) {
        float want = 10.0f * i + ((i % 2) ? 1.0f : 0.0f);
        if (res[i] != want) {
            printf("FAIL fetch_1d[%d] = %g, want %g\n", i, res[i], want);
            ++failures;
        }
    }

    // 2D array, linear filtering in x, clamped at the right edge.
    const int w = 8, h = 4;
    float grid[h][w];
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) grid[y][x] = 100.0f * y + 2.0f * x;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    CHECK(cudaMallocArray(&array, &desc, w, h) == cudaSuccess);
    CHECK(cudaMemcpyToArray(array, 0, 0, grid, sizeof grid, cudaMemcpyHostToDevice) == cudaSuccess);
    tex_array.filterMode = cudaFilterModeLinear;
    tex_array.addressMode[0] = cudaAddressModeClamp;
    tex_array.addressMode[1] = cudaAddressModeClamp;
    CHECK(cudaBindTextureToArray(tex_array, array) == cudaSuccess);
    sample_2d<<<1, dim3(w, h)>>>(out, w);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    cudaMemcpy(res, out, w * h * sizeof(float), cudaMemcpyDeviceToHost);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float right = grid[y][x + 1 < w ? x + 1 : w - 1];
            float want = 0.5f * grid[y][x] + 0.5f * right;
            if (res[y * w + x] != want) {
                printf("FAIL sample_2d(%d,%d) = %g, want %g\n", x, y, res[y * w + x], want);
                ++failures;
            }
        }

    // Texture object over pitched memory: point sampling, normalized coordinates, wrap.
    float* pitched;
    size_t pitch;
    CHECK(cudaMallocPitch((void**)&pitched, &pitch, w * sizeof(float), h) == cudaSuccess);
    CHECK(cudaMemcpy2D(pitched, pitch, grid, w * sizeof(float), w * sizeof(float), h,
                       cudaMemcpyHostToDevice) == cudaSuccess);
    cudaResourceDesc res_desc = {};
    res_desc.resType = cudaResourceTypePitch2D;
    res_desc.res.pitch2D.devPtr = pitched;
    res_desc.res.pitch2D.desc = desc;
    res_desc.res.pitch2D.width = w;
    res_desc.res.pitch2D.height = h;
    res_desc.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc tex_desc = {};
    tex_desc.addressMode[0] = cudaAddressModeWrap;
    tex_desc.addressMode[1] = cudaAddressModeWrap;
    tex_desc.filterMode = cudaFilterModePoint;
    tex_desc.readMode = cudaReadModeElementType;
    tex_desc.normalizedCoords = 1;
    cudaTextureObject_t obj = 0;
    CHECK(cudaCreateTextureObject(&obj, &res_desc, &tex_desc, nullptr) == cudaSuccess);
    sample_object<<<1, dim3(w, h)>>>(obj, out, w, h);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    cudaMemcpy(res, out, w * h * sizeof(float), cudaMemcpyDeviceToHost);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float want = grid[y][(x + 1) % w];
            if (res[y * w + x] != want) {
                printf("FAIL sample_object(%d,%d) = %g, want %g\n", x, y, res[y * w + x], want);
                ++failures;
            }
        }
    CHECK(cudaDestroyTextureObject(obj) == cudaSuccess);
    CHECK(cudaUnbindTexture(tex_lin) == cudaSuccess);
    CHECK(cudaFreeArray(array) == cudaSuccess);

    if (failures) return 1;
    printf("PASS\n");
    return 0;
}
