// Exercises the CUDA math, integer, atomic, warp, texture, printf and function-pointer
// features whose PTX the IR must lower. The .ptx files beside it are generated from it:
//   nvcc -ptx -arch=sm_80 -o intrinsics.nvcc-sm80.ptx intrinsics.cu          (CUDA 11.8)
//   clang++-19 --cuda-device-only --cuda-gpu-arch=sm_70 -nocudalib -S \
//       -o intrinsics.clang-sm70.ptx intrinsics.cu
#include <cuda_fp16.h>
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ __managed__ int managed_counter;
__constant__ float cscale[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int gtable[3] = {1, 2, 3};
__device__ int *gptr = gtable;
texture<float, 2, cudaReadModeElementType> tex2;
typedef float (*fn_t)(float);
__device__ float sq(float x) { return x * x; }
__device__ float cube(float x) { return x * x * x; }
__device__ fn_t fns[2] = {sq, cube};

__global__ void math(float *out, const float *in, double *dout, int n, cudaTextureObject_t tobj) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  double d = x;
  out[i] = sinf(x) + cosf(x) + expf(x) + logf(x) + sqrtf(x) + rsqrtf(x) + __fdividef(x, 3.0f) + powf(x, 2.5f)
      + tanhf(x) + erff(x) + fminf(x, 1.0f) + fabsf(x) + copysignf(x, -1.0f) + floorf(x) + truncf(x) + roundf(x)
      + __saturatef(x) + (float)__float2int_rn(x) + (float)(unsigned)x + cscale[i & 3] + tex2D(tex2, x, x)
      + tex2D<float>(tobj, x, 0.5f) + fns[i & 1](x) + __sinf(x) + exp2f(x) + log2f(x) + cbrtf(x) + fmaf(x, x, x)
      + (isnan(x) ? 1.0f : 0.0f) + (isinf(x) ? 1.f : 0.f);
  dout[i] = sin(d) + exp(d) + sqrt(d) + d / 3.0 + rint(d) + (double)(long long)d + fma(d, d, d) + 1.0 / d;
  __half h = __float2half(x);
  __half2 h2 = __halves2half2(h, h);
  h2 = __hfma2(h2, h2, h2);
  h2 = __hmul2(h2, h2);
  out[i + n] = __half2float(__low2half(h2)) + __half2float(__hadd(h, h));
}

__global__ void ints(int *a, unsigned *u, long long *l, unsigned long long *ul, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = a[i];
  unsigned w = u[i];
  a[i] = __popc(w) + __clz(v) + __ffs(v) + __brev(w) + __byte_perm(w, v, 0x3210) + __mulhi(v, 3) + __umulhi(w, w)
      + __sad(v, v + 1, w) + __mul24(v, v) + abs(v) + min(v, 3) + max(w, 4u) + (v / 7) + (v % 5) + (w / 3) + __funnelshift_l(w, w, v)
      + __dp4a(v, v, v) + (v >> 3) + (w >> 3) + __usad(w, w, w);
  l[i] = l[i] * l[i + 1] + __mul64hi(l[i], 7) + __popcll(ul[i]) + __clzll(l[i]) + (l[i] / 3) + __brevll(ul[i]);
  ul[i] = ul[i] + (ul[i] >> 5) + (unsigned long long)__ffsll(l[i]);
}

__global__ void atomics(int *a, unsigned *u, float *f, double *d, unsigned long long *ull, int n) {
  __shared__ int s[64];
  int i = threadIdx.x;
  s[i & 63] = 0;
  __syncthreads();
  atomicAdd(&s[i & 63], 1);
  atomicAdd(a, 1); atomicSub(a, 2); atomicExch(a, 3); atomicMin(a, 4); atomicMax(a, 5);
  atomicInc(u, 10); atomicDec(u, 10); atomicCAS(a, 1, 2); atomicAnd(a, 1); atomicOr(a, 1); atomicXor(a, 1);
  atomicAdd(f, 1.0f); atomicAdd(d, 1.0); atomicAdd(ull, 1ull); atomicCAS(ull, 1ull, 2ull); atomicMax(ull, 3ull);
  atomicAdd_system(a, 1); atomicAdd_block(a, 1);
  __threadfence(); __threadfence_block(); __threadfence_system();
  int c = __syncthreads_count(i > 3) + __syncthreads_and(i > 2) + __syncthreads_or(i > 1);
  volatile int *vp = a; vp[1] = c + s[(i + 1) & 63];
  if (i == 0) printf("hello %d %f\n", c, 1.0);
}

__global__ void warps(int *a, float *f) {
  int i = threadIdx.x;
  unsigned m = __activemask();
  int v = a[i];
  v += __shfl_sync(m, v, 0) + __shfl_up_sync(m, v, 1) + __shfl_down_sync(m, v, 2) + __shfl_xor_sync(m, v, 4);
  float x = __shfl_xor_sync(0xffffffff, f[i], 1);
  double dd = __shfl_sync(0xffffffff, (double)x, 3);
  v += __ballot_sync(m, v > 0) + __all_sync(m, v > 1) + __any_sync(m, v > 2) + __uni_sync(m, v > 3);
  v += __match_any_sync(m, v); int pred; v += __match_all_sync(m, v, &pred) + pred;
#if __CUDA_ARCH__ >= 800
  v += __reduce_add_sync(m, v) + __reduce_min_sync(m, v) + __reduce_or_sync(m, (unsigned)v);
#endif
  __syncwarp();
  auto g = cg::this_thread_block();
  g.sync();
  auto t = cg::tiled_partition<16>(g);
  v += t.shfl_down(v, 1);
  long long c0 = clock64(); unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  a[i] = v + (int)dd + (int)(clock64() - c0) + sm;
}
