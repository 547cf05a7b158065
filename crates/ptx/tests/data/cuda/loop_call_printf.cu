#include <cstdio>
__device__ float g_arr[4] = {1.0f, 2.5f, 3.0f, 4.0f};
__constant__ int c_tab[3] = {1, 2, 3};
__device__ int* g_ptr = nullptr;
__device__ __noinline__ float helper(float a, int b) { return a * b + g_arr[b & 3]; }
__global__ void k(float* __restrict__ out, const float4* in, double* d, int n) {
  extern __shared__ float smem[];
  __shared__ int cnt;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) cnt = 0;
  __syncthreads();
  float acc = 0;
  for (int j = i; j < n; j += gridDim.x * blockDim.x) {
    float4 v = in[j];
    acc += v.x * v.y + v.z - v.w;
    acc = helper(acc, j);
    d[j] = sqrt((double)acc) * 1.5;
  }
  smem[threadIdx.x] = acc;
  atomicAdd(&cnt, 1);
  __syncthreads();
  acc += __shfl_down_sync(0xffffffff, acc, 1);
  if (acc > 100.f) printf("big %f %d\n", acc, i);
  out[i] = acc + smem[(threadIdx.x+1)%blockDim.x] + c_tab[i%3];
}
