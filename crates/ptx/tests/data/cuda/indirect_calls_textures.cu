#include <cstdio>
#include <cassert>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ int gx;
__device__ int* gp = &gx;
__device__ int* gpa[2] = {&gx, &gx + 1};
struct S { int a; int* p; float f; };
__device__ S gs = {1, &gx, 2.0f};
__managed__ int managed_v;
texture<float, 2> texref2;
typedef int (*fp_t)(int);
__device__ int f1(int x) { return x + 1; }
__device__ int f2(int x) { return x * 2; }
__device__ fp_t tbl[2] = {f1, f2};
__device__ void vfn(int* p) { *p = 3; }
__device__ void (*vptr)(int*) = vfn;
__global__ void __launch_bounds__(256, 2) k2(int* out, half* h, double* d, unsigned long long* ull, cudaTextureObject_t to) {
  int i = threadIdx.x;
  assert(i < 1024);
  out[i] = tbl[i & 1](i);
  vptr(out + 1);
  half a = h[i], b = h[i+1];
  h[i] = __hadd(a, __hmul(a, b));
  __half2 hh = __halves2half2(a, b);
  hh = __hfma2(hh, hh, hh);
  h[i+2] = __low2half(hh);
  atomicCAS(ull, 1ull, 2ull);
  atomicAdd(d, 1.0);
  atomicMax(out, i);
  atomicExch((float*)out, 1.0f);
  unsigned m = __ballot_sync(0xffffffff, i > 3);
  m += __activemask();
  m += __popc(m) + __clz(m) + __brev(m) + __ffs(m);
  m += __any_sync(0xffffffff, i) + __all_sync(0xffffffff, i);
  m += __match_any_sync(0xffffffff, i);
  m += __reduce_add_sync(0xffffffff, i);
  float t = tex2D(texref2, 0.5f, 1.5f);
  float t2 = tex2D<float>(to, 0.5f, i);
  out[i+3] = m + (int)t + (int)t2 + managed_v;
  __threadfence();
  cg::grid_group g = cg::this_grid();
  g.sync();
  float x = __ldg((const float*)out + 5);
  x = __fdividef(x, 3.f) + __sinf(x) + __expf(x) + rsqrtf(x);
  long long c = clock64();
  out[i+4] = (int)x + (int)c + __float2int_rn(x) + __double2int_rz(*d) + __umulhi(m, 7) + __mul24(i, m);
  if (i == 7) __trap();
}
