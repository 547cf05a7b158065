// y = a * x + y with a grid-stride loop over a length that is not a multiple of the
// grid size, so the last iteration runs with a partial warp. The host buffers are
// page-locked (cudaMallocHost): this is the workload that exercises pinned memory.
#include "../common/workload.h"

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 4000037 : 200003;
    const float a = 2.5f;
    const int threads = 256;
    const int blocks = 48;

    float *h_x, *h_y, *h_out;
    CUDA_CHECK(cudaMallocHost(&h_x, sizeof(float) * n));
    CUDA_CHECK(cudaMallocHost(&h_y, sizeof(float) * n));
    CUDA_CHECK(cudaMallocHost(&h_out, sizeof(float) * n));
    Lcg rng(7u);
    for (int i = 0; i < n; ++i) h_x[i] = rng.range(-4.0f, 4.0f);
    for (int i = 0; i < n; ++i) h_y[i] = rng.range(-4.0f, 4.0f);

    float *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_y, sizeof(float) * n));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, sizeof(float) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, h_y, sizeof(float) * n, cudaMemcpyHostToDevice));

    saxpy<<<blocks, threads>>>(n, a, d_x, d_y);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_out, d_y, sizeof(float) * n, cudaMemcpyDeviceToHost));

    // The device may fuse the multiply-add (one rounding) where the host rounds twice,
    // so allow one rounding error of the product plus one of the sum.
    int result = -1;
    for (int i = 0; i < n; ++i) {
        double ref = (double)a * h_x[i] + h_y[i];
        double tol = 2.5e-7 * (abs_d((double)a * h_x[i]) + abs_d(h_y[i]) + abs_d(ref));
        if (abs_d(h_out[i] - ref) > tol) {
            result = report_fail("y[%d] = %.9g, expected %.9g", i, (double)h_out[i], ref);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFreeHost(h_x));
    CUDA_CHECK(cudaFreeHost(h_y));
    CUDA_CHECK(cudaFreeHost(h_out));
    return result < 0 ? report_pass() : result;
}
