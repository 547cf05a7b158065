// Unified memory with prefetch and advice hints, and stream-ordered allocation: the hints
// succeed on valid ranges and fail on others, and kernels see the managed bytes.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float* data, const float* factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= *factor;
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
    const int n = 300;
    float* data;
    CHECK(cudaMallocManaged(&data, n * sizeof(float)) == cudaSuccess);
    for (int i = 0; i < n; ++i) data[i] = (float)i;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    CHECK(cudaMemAdvise(data, n * sizeof(float), cudaMemAdviseSetReadMostly, 0) == cudaSuccess);
    CHECK(cudaMemPrefetchAsync(data, n * sizeof(float), 0, s) == cudaSuccess);
    CHECK(cudaMemPrefetchAsync(data, (n + 1) * sizeof(float), 0, s) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    float* factor;
    CHECK(cudaMallocAsync((void**)&factor, sizeof(float), s) == cudaSuccess);
    float three = 3.0f;
    CHECK(cudaMemcpyAsync(factor, &three, sizeof three, cudaMemcpyHostToDevice, s) == cudaSuccess);
    scale<<<(n + 127) / 128, 128, 0, s>>>(data, factor, n);
    CHECK(cudaFreeAsync(factor, s) == cudaSuccess);
    CHECK(cudaMemPrefetchAsync(data, n * sizeof(float), cudaCpuDeviceId, s) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    for (int i = 0; i < n; ++i) {
        if (data[i] != 3.0f * i) {
            printf("FAIL data[%d] = %g\n", i, data[i]);
            ++failures;
            break;
        }
    }
    CHECK(cudaFree(data) == cudaSuccess);
    if (failures) return 1;
    printf("PASS\n");
    return 0;
}
