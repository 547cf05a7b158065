// LD_PRELOAD shim: times every cudaLaunchKernel with events, and converts to SM cycles
// with a clock64 spin kernel timed the same way (device time only; used once, on a lent GPU).
#include <dlfcn.h>
#include <stdio.h>
#include <cuda_runtime_api.h>
typedef cudaError_t (*launch_t)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
__global__ void spin(long long n, long long* out) {
  long long t0 = clock64(); while (clock64() - t0 < n) {} *out = clock64() - t0;
}
static launch_t real_launch;
static int launches;
static double mhz() {
  long long* d; cudaMalloc(&d, 8); cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  void* args[2]; long long n = 20000000; args[0] = &n; args[1] = &d;
  cudaEventRecord(a, 0); real_launch((const void*)spin, dim3(1), dim3(1), args, 0, 0); cudaEventRecord(b, 0);
  cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); long long c; cudaMemcpy(&c, d, 8, cudaMemcpyDeviceToHost); cudaFree(d);
  return c / (ms * 1000.0);
}
extern "C" cudaError_t cudaLaunchKernel(const void* f, dim3 g, dim3 bl, void** args, size_t sh, cudaStream_t st) {
  if (!real_launch) { real_launch = (launch_t)dlsym(RTLD_NEXT, "cudaLaunchKernel"); fprintf(stderr, "KCLOCK %.1f MHz\n", mhz()); }
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  cudaEventRecord(a, st); cudaError_t r = real_launch(f, g, bl, args, sh, st); cudaEventRecord(b, st);
  cudaEventSynchronize(b); float ms = 0; cudaEventElapsedTime(&ms, a, b);
  fprintf(stderr, "KTIME %d grid %u,%u,%u block %u,%u,%u us %.3f\n", launches++, g.x, g.y, g.z, bl.x, bl.y, bl.z, ms * 1000.0);
  cudaEventDestroy(a); cudaEventDestroy(b);
  return r;
}
