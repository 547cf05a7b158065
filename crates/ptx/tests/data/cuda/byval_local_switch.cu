#include <cuda_fp16.h>
#include <cstdint>
struct __align__(16) Big { double a, b; int c[3]; };
__device__ Big byval(Big b, int k) { b.c[k & 1] += 1; b.a *= 2; return b; }
__device__ __noinline__ void vf(float* p, Big b) { p[0] = b.a + b.c[2]; }
__constant__ float4 cf4[2] = {{1,2,3,4},{5,6,7,8}};
__device__ const char* strs[2] = {"ab", "cd"};
__device__ unsigned short hgbits = 0x3c00;
__global__ void __launch_bounds__(128) k3(float* o, Big* bb, int n, half2* h2, uint64_t* u, float2* f2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int local[32];
  for (int j = 0; j < 32; ++j) local[j] = i * j;
  Big b = byval(bb[i % 4], n);
  vf(o, b);
  o[i] = local[(i * 7) % 32] + cf4[i & 1].y + strs[i & 1][0];
  h2[i] = __hmul2(h2[i], h2[i+1]);
  u[i] = __double_as_longlong(atomicAdd((double*)u + 1, 2.0)) + atomicInc((unsigned*)u + 5, 9);
  float2 f = f2[i]; f2[i + 1] = make_float2(f.y, f.x);
  o[i + 1] = __half2float(__ushort_as_half(hgbits)) + __shfl_xor_sync(0xffffffff, o[i], 4) + __shfl_sync(0xffffffff, o[i], 0);
  switch (n & 7) { case 0: o[0] = 1; break; case 1: o[1] = 2; break; case 2: o[3] = 4; break; case 3: o[9] = 1; break; case 4: o[7] = 3; break; case 5: o[2]=8; break; default: o[5] = 6; }
  if (isnan(o[4]) || isinf(o[5])) o[6] = copysignf(1.0f, o[7]) + fminf(o[8], 3.f) + truncf(o[9]) + roundf(o[1]);
  o[10] = (float)(long long)o[11] + (double)o[12] / 3.0 + sin(o[13]) + powf(o[14], 2.5f);
}
