// cp.async ordering test (nvcc -arch=sm_80 -ptx cp_async.cu -o cp_async.nvcc-sm80.ptx).
// One warp; each lane copies 16 bytes into two shared buffers as two commit groups and
// records what it reads back before and after each wait. Reading the destination before
// the wait is a race in CUDA; regsim's emulator makes the data visible exactly at the
// wait, which is what the test checks.
#include <cuda_pipeline.h>

__global__ void cp_async_order(const int4* in, int* out) {
  __shared__ int4 a[32], b[32], c[32];
  int t = threadIdx.x;
  a[t] = make_int4(-1, -1, -1, -1);
  b[t] = make_int4(-2, -2, -2, -2);
  c[t] = make_int4(-3, -3, -3, -3);
  __syncwarp();
  __pipeline_memcpy_async(&a[t], &in[t], 16);
  __pipeline_commit();
  __pipeline_memcpy_async(&b[t], &in[32 + t], 16);
  __pipeline_commit();
  volatile int* va = (volatile int*)a;
  volatile int* vb = (volatile int*)b;
  volatile int* vc = (volatile int*)c;
  out[t] = va[4 * t];
  out[32 + t] = vb[4 * t];
  __pipeline_wait_prior(1);
  out[64 + t] = va[4 * t];
  out[96 + t] = vb[4 * t];
  __pipeline_wait_prior(0);
  out[128 + t] = vb[4 * t + 3];
  // Zero fill: 8 of 16 bytes come from memory, the rest are zeros.
  __pipeline_memcpy_async(&c[t], &in[t], 16, 8);
  out[160 + t] = vc[4 * t];
  asm volatile("cp.async.wait_all;" ::: "memory");
  out[192 + t] = vc[4 * t] + vc[4 * t + 1] + vc[4 * t + 2] + vc[4 * t + 3];
}
