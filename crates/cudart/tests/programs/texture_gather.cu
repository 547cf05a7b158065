// Texture gather through the runtime into the emulator: tex2Dgather (PTX tld4) of every
// component over a four-channel float cudaArray, through texture objects with clamp and
// wrap addressing, at points whose bilinear footprints cross every edge; and txq (width,
// height, addressing, filter and channel order) through inline PTX, because CUDA C++ has no
// intrinsic that lowers to txq. A host reference checks each value. Prints one line per
// failed check and `PASS` at the end.
#include <cstdio>
#include <cuda_runtime.h>

const int W = 5, H = 3;

// Channel c of texel (x, y): every texel and every component is distinguishable.
static float texel(int x, int y, int c) { return 1000.0f * c + 10.0f * y + x; }

// Thread (x, y) gathers at the texel corner (x, y): the footprint's top-left texel is
// (x - 1, y - 1), so x = 0 and x = W reach one texel past each side.
__global__ void gather(cudaTextureObject_t t, float* out) {
    int x = threadIdx.x, y = threadIdx.y;
    float* o = out + 16 * (y * blockDim.x + x);
    float4 r = tex2Dgather<float4>(t, (float)x, (float)y, 0);
    float4 g = tex2Dgather<float4>(t, (float)x, (float)y, 1);
    float4 b = tex2Dgather<float4>(t, (float)x, (float)y, 2);
    float4 a = tex2Dgather<float4>(t, (float)x, (float)y, 3);
    float4 all[4] = {r, g, b, a};
    for (int c = 0; c < 4; ++c) {
        o[4 * c + 0] = all[c].x;
        o[4 * c + 1] = all[c].y;
        o[4 * c + 2] = all[c].z;
        o[4 * c + 3] = all[c].w;
    }
}

__global__ void query(cudaTextureObject_t t, unsigned* out) {
    unsigned w, h, addr0, filter, order;
    asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
    asm("txq.height.b32 %0, [%1];" : "=r"(h) : "l"(t));
    asm("txq.addr_mode_0.b32 %0, [%1];" : "=r"(addr0) : "l"(t));
    asm("txq.filter_mode.b32 %0, [%1];" : "=r"(filter) : "l"(t));
    asm("txq.channel_order.b32 %0, [%1];" : "=r"(order) : "l"(t));
    out[0] = w;
    out[1] = h;
    out[2] = addr0;
    out[3] = filter;
    out[4] = order;
}

static int failures = 0;
#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            printf("FAIL line %d: %s\n", __LINE__, #cond);             \
            ++failures;                                                \
        }                                                              \
    } while (0)

static int address(int i, int n, bool wrap) {
    if (wrap) return ((i % n) + n) % n;
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

static void check_gather(cudaArray_t array, float* out, bool wrap) {
    cudaResourceDesc res_desc = {};
    res_desc.resType = cudaResourceTypeArray;
    res_desc.res.array.array = array;
    cudaTextureDesc tex_desc = {};
    cudaTextureAddressMode mode = wrap ? cudaAddressModeWrap : cudaAddressModeClamp;
    tex_desc.addressMode[0] = mode;
    tex_desc.addressMode[1] = mode;
    tex_desc.filterMode = cudaFilterModePoint;
    tex_desc.readMode = cudaReadModeElementType;
    cudaTextureObject_t obj = 0;
    CHECK(cudaCreateTextureObject(&obj, &res_desc, &tex_desc, nullptr) == cudaSuccess);
    const int tw = W + 1, th = H + 1;
    gather<<<1, dim3(tw, th)>>>(obj, out);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    static float res[16 * (W + 1) * (H + 1)];
    cudaMemcpy(res, out, sizeof res, cudaMemcpyDeviceToHost);
    for (int y = 0; y < th; ++y)
        for (int x = 0; x < tw; ++x) {
            // PTX tld4: counter-clockwise from the lower left, rows growing downwards.
            int x0 = x - 1, y0 = y - 1;
            int fx[4] = {x0, x0 + 1, x0 + 1, x0}, fy[4] = {y0 + 1, y0 + 1, y0, y0};
            for (int c = 0; c < 4; ++c)
                for (int k = 0; k < 4; ++k) {
                    float want = texel(address(fx[k], W, wrap), address(fy[k], H, wrap), c);
                    float got = res[16 * (y * tw + x) + 4 * c + k];
                    if (got != want) {
                        printf("FAIL %s gather(%d,%d) comp %d texel %d = %g, want %g\n",
                               wrap ? "wrap" : "clamp", x, y, c, k, got, want);
                        ++failures;
                    }
                }
        }

    unsigned* q;
    CHECK(cudaMalloc(&q, 5 * sizeof(unsigned)) == cudaSuccess);
    query<<<1, 1>>>(obj, q);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    unsigned got[5];
    cudaMemcpy(got, q, sizeof got, cudaMemcpyDeviceToHost);
    CHECK(got[0] == W);
    CHECK(got[1] == H);
    // PTX addressing modes: wrap = 0, clamp_to_edge = 3; filter nearest = 0; CLK_RGBA.
    CHECK(got[2] == (wrap ? 0u : 3u));
    CHECK(got[3] == 0);
    CHECK(got[4] == 0x10B5);
    CHECK(cudaFree(q) == cudaSuccess);
    CHECK(cudaDestroyTextureObject(obj) == cudaSuccess);
}

int main() {
    float4 host[H][W];
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
            host[y][x] = make_float4(texel(x, y, 0), texel(x, y, 1), texel(x, y, 2), texel(x, y, 3));
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float4>();
    cudaArray_t array;
    CHECK(cudaMallocArray(&array, &desc, W, H) == cudaSuccess);
    CHECK(cudaMemcpy2DToArray(array, 0, 0, host, W * sizeof(float4), W * sizeof(float4), H,
                              cudaMemcpyHostToDevice) == cudaSuccess);
    float* out;
    CHECK(cudaMalloc(&out, 16 * (W + 1) * (H + 1) * sizeof(float)) == cudaSuccess);
    check_gather(array, out, false);
    check_gather(array, out, true);
    CHECK(cudaFree(out) == cudaSuccess);
    CHECK(cudaFreeArray(array) == cudaSuccess);

    if (failures) return 1;
    printf("PASS\n");
    return 0;
}
