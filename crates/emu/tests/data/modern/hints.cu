#include <cuda/annotated_ptr>
__global__ void hints(const float* __restrict__ in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float a = __ldg(&in[i]);
    float b = __ldcg(&in[(i + 1) % n]);
    float c = __ldcs(&in[(i + 2) % n]);
    float d = __ldlu(&in[(i + 3) % n]);
    __stcg(&out[i], a + b + c + d);
  }
}
__global__ void policy(float* data, int n) {
  cuda::annotated_ptr<float, cuda::access_property::persisting> p(data);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * 2.0f + 1.0f;
}
