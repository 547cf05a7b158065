#include <mma.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
using namespace nvcuda;
surface<void, 2> surfRef;
__device__ __forceinline__ int inl(int a) { return a * 3; }
__global__ void wm(half* a, half* b, float* c, __nv_bfloat16* bf, int* x, cudaSurfaceObject_t so) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
  __shared__ int sh[64];
  __pipeline_memcpy_async(&sh[threadIdx.x], &x[threadIdx.x], 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  bf[threadIdx.x] = __hadd(bf[threadIdx.x], bf[threadIdx.x + 1]);
  atomicAdd_system(x, 1);
  atomicAdd_block(x + 1, inl(sh[threadIdx.x]));
  int v; surf2Dread(&v, surfRef, 4, 5); surf2Dwrite(v + 1, surfRef, 4, 5);
  int w = surf2Dread<int>(so, 0, 1); surf2Dwrite(w, so, 1, 1);
  unsigned u = __funnelshift_l(x[0], x[1], x[2]) + __byte_perm(x[0], x[1], 0x5410) + __sad(x[0], x[1], 3) + __vadd2(x[0], x[1]) + __dp4a(x[0], x[1], 2);
  x[5] = u + __double_as_longlong(1.0 / (double)u) + __ldcg(x + 7) + __ldcs(x + 8);
  __stcs(x + 9, 3);
  __nanosleep(100);
  x[6] = __ffsll(x[0]) + __brevll(x[1]) + __clzll(x[2]) + (int)__ull2double_rn(x[3]) + (int)fmaf(1.f, 2.f, c[2]) + (int)__fsqrt_rn(c[4]) + (int)exp2f(c[3]) + (int)tanhf(c[1]);
}
