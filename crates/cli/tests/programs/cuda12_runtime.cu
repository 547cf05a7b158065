// A CUDA 12 program (built by clang-19 against the CUDA 12.9 headers and libcudart.so.12
// of scripts/install-cuda12-toolchain.sh): it must load regsim's runtime as
// libcudart.so.12 and see the CUDA 12 API. Prints one line per check, then PASS.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>

// nvcc 12's launch stubs call these; clang's do not, so the program calls them itself.
extern "C" cudaError_t __cudaGetKernel(cudaKernel_t *, const void *);
extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
extern "C" cudaError_t cudaGetDeviceProperties_v2(cudaDeviceProp *, int);

__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

static int failures = 0;
static void check(bool ok, const char *what) {
    printf("%s: %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) failures++;
}
#define CUDA(call) check((call) == cudaSuccess, #call)

int main() {
    int runtime = 0, driver = 0;
    CUDA(cudaRuntimeGetVersion(&runtime));
    CUDA(cudaDriverGetVersion(&driver));
    printf("runtime %d driver %d\n", runtime, driver);
    check(runtime >= 12000 && driver >= runtime, "CUDA 12 versions");

    // Every byte of CUDA 12's larger struct must be written, the tail included.
    cudaDeviceProp p;
    memset(&p, 0x5a, sizeof p);
    CUDA(cudaGetDeviceProperties(&p, 0));
    check(p.reserved[62] == 0 && p.memoryPoolsSupported == 1, "cudaDeviceProp (CUDA 12 layout)");
    check(p.clusterLaunch == (p.major >= 9), "clusterLaunch");
    cudaDeviceProp q;
    memset(&q, 0x5a, sizeof q);
    CUDA(cudaGetDeviceProperties_v2(&q, 0));
    check(memcmp(&p, &q, sizeof p) == 0, "cudaGetDeviceProperties_v2");
    printf("device %s, compute capability %d.%d\n", p.name, p.major, p.minor);

    const int n = 1000;
    float hx[n], hy[n];
    for (int i = 0; i < n; i++) { hx[i] = i; hy[i] = 1.0f; }
    float *x, *y;
    CUDA(cudaMalloc(&x, n * sizeof(float)));
    CUDA(cudaMallocAsync((void **)&y, n * sizeof(float), 0));
    CUDA(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice));
    CUDA(cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice));

    // 1. The triple-chevron launch: y = 2x + 1.
    axpy<<<(n + 127) / 128, 128>>>(2.0f, x, y, n);
    CUDA(cudaGetLastError());
    // 2. cudaLaunchKernelEx with a priority hint: y += 3x.
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((n + 255) / 256);
    config.blockDim = dim3(256);
    cudaLaunchAttribute priority;
    priority.id = cudaLaunchAttributePriority;
    priority.val.priority = 0;
    config.attrs = &priority;
    config.numAttrs = 1;
    CUDA(cudaLaunchKernelEx(&config, axpy, 3.0f, (const float *)x, y, n));
    // 3. nvcc 12's path, a kernel handle: y += x.
    cudaKernel_t kernel = nullptr;
    CUDA(__cudaGetKernel(&kernel, (const void *)axpy));
    float one = 1.0f;
    int count = n;
    void *args[] = {&one, &x, &y, &count};
    CUDA(__cudaLaunchKernel(kernel, dim3((n + 63) / 64), dim3(64), args, 0, 0));
    // A cluster launch is checked, not ignored: 4 CTAs are not whole clusters of 3 (sm_90),
    // and a GPU below compute capability 9.0 has no clusters.
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 3;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    check(cudaLaunchKernelEx(&config, axpy, 1.0f, (const float *)x, y, n) ==
              (p.major >= 9 ? cudaErrorInvalidClusterSize : cudaErrorNotSupported),
          "cluster launch refused");
    cudaGetLastError();

    CUDA(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += hy[i] != 6.0f * i + 1.0f;
    check(wrong == 0, "results");

    // The driver API, reached through the runtime, sees the runtime's memory.
    void *entry = nullptr;
    cudaDriverEntryPointQueryResult status;
    CUDA(cudaGetDriverEntryPoint("cuMemcpyDtoH", &entry, cudaEnableDefault, &status));
    check(entry != nullptr && status == cudaDriverEntryPointSuccess, "driver entry point");
    float via_driver[n];
    typedef CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    check(entry && ((MemcpyDtoH)entry)(via_driver, (CUdeviceptr)y, sizeof via_driver) == CUDA_SUCCESS &&
              memcmp(via_driver, hy, sizeof hy) == 0,
          "cuMemcpyDtoH of a cudaMalloc'd buffer");
    CUDA(cudaGetDriverEntryPoint("cuNoSuchFunction", &entry, cudaEnableDefault, &status));
    check(entry == nullptr && status == cudaDriverEntryPointSymbolNotFound, "unknown entry point");
    CUDA(cudaFreeAsync(y, 0));
    CUDA(cudaFree(x));
    printf(failures == 0 ? "PASS\n" : "FAIL\n");
    return failures != 0;
}
