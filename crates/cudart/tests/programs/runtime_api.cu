// Exercises the runtime API without running kernels: device description, memory, symbols,
// pitched copies, arrays and textures, streams and events, error reporting, and an
// unsupported call. Prints one line per failed check and `PASS` at the end.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__device__ int dev_table[16];
__constant__ float const_coeffs[4];
texture<float, 1, cudaReadModeElementType> tex_linear;

__global__ void touch(int* p) { p[threadIdx.x] = dev_table[threadIdx.x] + (int)tex1Dfetch(tex_linear, 0); }

static int failures = 0;
#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            printf("FAIL line %d: %s\n", __LINE__, #cond);             \
            ++failures;                                                \
        }                                                              \
    } while (0)

int main() {
    int count = -1;
    CHECK(cudaGetDeviceCount(&count) == cudaSuccess && count == 1);
    CHECK(cudaSetDevice(0) == cudaSuccess);
    CHECK(cudaSetDevice(3) == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaSuccess);

    cudaDeviceProp prop;
    memset(&prop, 0xff, sizeof prop);
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    CHECK(strncmp(prop.name, "regsim", 6) == 0);
    CHECK(prop.major == 7 && prop.minor == 0);
    CHECK(prop.warpSize == 32);
    CHECK(prop.multiProcessorCount == 80);
    CHECK(prop.sharedMemPerBlock == 48 * 1024);
    CHECK(prop.maxThreadsDim[2] == 64);
    CHECK(prop.maxGridSize[1] == 65535);
    CHECK(prop.regsPerMultiprocessor == 65536);
    CHECK(prop.maxBlocksPerMultiProcessor == 32);
    CHECK(prop.reservedSharedMemPerBlock == 0);
    int value = 0;
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess && value == 7);
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0) == cudaSuccess && value == 96 * 1024);
    int version = 0;
    CHECK(cudaDriverGetVersion(&version) == cudaSuccess && version == 11080);
    CHECK(cudaRuntimeGetVersion(&version) == cudaSuccess && version == 11080);

    // Memory: round trip, bounds, allocation failure.
    int host[64], back[64];
    for (int i = 0; i < 64; ++i) host[i] = i * 3;
    int* dev = nullptr;
    CHECK(cudaMalloc(&dev, sizeof host) == cudaSuccess && dev != nullptr);
    CHECK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemset(dev + 8, 0, 8 * sizeof(int)) == cudaSuccess);
    CHECK(cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[7] == 21 && back[8] == 0 && back[15] == 0 && back[16] == 48);
    CHECK(cudaMemcpy(back, dev, sizeof back + 4, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(back, dev, 4, (cudaMemcpyKind)9) == cudaErrorInvalidMemcpyDirection);
    void* huge = nullptr;
    CHECK(cudaMalloc(&huge, (size_t)1 << 60) == cudaErrorMemoryAllocation);
    CHECK(cudaPeekAtLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaFree(dev) == cudaSuccess);
    CHECK(cudaFree(dev) == cudaErrorInvalidValue);
    cudaGetLastError();

    float* pinned = nullptr;
    CHECK(cudaMallocHost(&pinned, 256) == cudaSuccess);
    float* managed = nullptr;
    CHECK(cudaMallocManaged(&managed, 256) == cudaSuccess);
    managed[3] = 2.5f;
    CHECK(cudaMemcpy(pinned, managed, 256, cudaMemcpyDefault) == cudaSuccess && pinned[3] == 2.5f);
    CHECK(cudaFreeHost(pinned) == cudaSuccess && cudaFree(managed) == cudaSuccess);

    // Pitched memory and 2D copies.
    char* pitched = nullptr;
    size_t pitch = 0;
    CHECK(cudaMallocPitch((void**)&pitched, &pitch, 100, 3) == cudaSuccess && pitch >= 100);
    char rows[3][100], rows_back[3][100];
    for (int r = 0; r < 3; ++r) memset(rows[r], 'a' + r, 100);
    CHECK(cudaMemcpy2D(pitched, pitch, rows, 100, 100, 3, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy2D(rows_back, 100, pitched, pitch, 100, 3, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(memcmp(rows, rows_back, sizeof rows) == 0);
    CHECK(cudaMemcpy2D(pitched, pitch, rows, 100, 100, 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    cudaGetLastError();

    // Symbols.
    int table[16], table_back[16];
    for (int i = 0; i < 16; ++i) table[i] = 100 + i;
    CHECK(cudaMemcpyToSymbol(dev_table, table, sizeof table) == cudaSuccess);
    CHECK(cudaMemcpyFromSymbol(table_back, dev_table, 4 * sizeof(int), 12 * sizeof(int)) == cudaSuccess);
    CHECK(table_back[0] == 112 && table_back[3] == 115);
    CHECK(cudaMemcpyToSymbol(dev_table, table, sizeof table, 4) == cudaErrorInvalidValue);
    cudaGetLastError();
    float coeffs[4] = {1, 2, 3, 4};
    CHECK(cudaMemcpyToSymbol(const_coeffs, coeffs, sizeof coeffs) == cudaSuccess);
    void* sym = nullptr;
    CHECK(cudaGetSymbolAddress(&sym, dev_table) == cudaSuccess && sym != nullptr);
    // A device pointer, not a host one (device memory is not host memory): read it back.
    int sym_word = 0;
    CHECK(cudaMemcpy(&sym_word, (int*)sym + 5, sizeof sym_word, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(sym_word == 105);
    size_t sym_size = 0;
    CHECK(cudaGetSymbolSize(&sym_size, const_coeffs) == cudaSuccess && sym_size == 16);

    // Arrays and textures.
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    CHECK(desc.x == 32 && desc.y == 0 && desc.f == cudaChannelFormatKindFloat);
    cudaArray_t array = nullptr;
    CHECK(cudaMallocArray(&array, &desc, 16, 4) == cudaSuccess);
    float texels[64];
    for (int i = 0; i < 64; ++i) texels[i] = (float)i;
    CHECK(cudaMemcpyToArray(array, 0, 0, texels, sizeof texels, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpyToArray(array, 0, 0, texels, sizeof texels + 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    cudaGetLastError();
    float* lin = nullptr;
    CHECK(cudaMalloc(&lin, sizeof texels) == cudaSuccess);
    size_t offset = 1;
    CHECK(cudaBindTexture(&offset, tex_linear, lin, sizeof texels) == cudaSuccess && offset == 0);
    CHECK(cudaBindTexture(&offset, tex_linear, lin, sizeof texels * 2) == cudaErrorInvalidValue);
    cudaGetLastError();
    CHECK(cudaUnbindTexture(tex_linear) == cudaSuccess);
    CHECK(cudaFreeArray(array) == cudaSuccess);

    // Streams and events.
    cudaStream_t stream;
    cudaEvent_t start, stop;
    CHECK(cudaStreamCreate(&stream) == cudaSuccess);
    CHECK(cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess);
    CHECK(cudaEventRecord(start, stream) == cudaSuccess);
    CHECK(cudaMemsetAsync(lin, 0, sizeof texels, stream) == cudaSuccess);
    CHECK(cudaEventRecord(stop, stream) == cudaSuccess);
    CHECK(cudaEventSynchronize(stop) == cudaSuccess);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess && ms >= 0);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(cudaEventDestroy(start) == cudaSuccess && cudaEventDestroy(stop) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);

    // Kernels as objects (no launch).
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, touch) == cudaSuccess && attr.maxThreadsPerBlock == 1024);
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, touch, 256, 0) == cudaSuccess && blocks == 8);
    CHECK(cudaFuncSetCacheConfig(touch, cudaFuncCachePreferL1) == cudaSuccess);
    CHECK(cudaFuncGetAttributes(&attr, (const void*)main) == cudaErrorInvalidDeviceFunction);
    cudaGetLastError();

    // Error strings and an unsupported call.
    CHECK(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
    CHECK(strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument") == 0);
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0) == cudaErrorNotSupported);
    CHECK(cudaGetLastError() == cudaErrorNotSupported);
    CHECK(cudaDeviceReset() == cudaSuccess);

    if (failures) return 1;
    printf("PASS\n");
    return 0;
}
