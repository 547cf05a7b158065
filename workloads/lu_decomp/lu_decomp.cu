// LU factorisation without pivoting (Doolittle, right-looking) of a diagonally dominant
// matrix, in place: for each pivot k, one kernel updates the trailing submatrix,
// a[i][j] -= (a[i][k] / a[k][k]) a[k][j] for i, j > k, with 16x16 CTAs that stage the
// pivot row and the multipliers of their rows in shared memory, and a second kernel then
// replaces column k below the pivot by the multipliers. The grid shrinks as k grows.
#include "../common/workload.h"

#define T 16

__global__ void __launch_bounds__(T * T)
lu_update(float* __restrict__ a, int n, int k) {
    __shared__ float row_k[T];
    __shared__ float mult[T];
    int i = k + 1 + blockIdx.y * T + threadIdx.y;
    int j = k + 1 + blockIdx.x * T + threadIdx.x;
    if (threadIdx.y == 0 && j < n) row_k[threadIdx.x] = a[(size_t)k * n + j];
    if (threadIdx.x == 0 && i < n) mult[threadIdx.y] = a[(size_t)i * n + k] / a[(size_t)k * n + k];
    __syncthreads();
    if (i < n && j < n) a[(size_t)i * n + j] -= mult[threadIdx.y] * row_k[threadIdx.x];
}

__global__ void __launch_bounds__(T * T)
lu_scale(float* __restrict__ a, int n, int k) {
    int i = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[(size_t)i * n + k] /= a[(size_t)k * n + k];
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int n = large ? 256 : 72;
    size_t nn = (size_t)n * n;
    float* h_a = (float*)malloc(sizeof(float) * nn);
    float* h_lu = (float*)malloc(sizeof(float) * nn);
    Lcg rng(5150u);
    for (int i = 0; i < n; ++i) {
        double row = 0.0;
        for (int j = 0; j < n; ++j) {
            h_a[(size_t)i * n + j] = rng.range(-1.0f, 1.0f);
            row += abs_d(h_a[(size_t)i * n + j]);
        }
        h_a[(size_t)i * n + i] = (float)(row + 1.0);  // strictly diagonally dominant
    }
    float* d_a;
    CUDA_CHECK(cudaMalloc(&d_a, sizeof(float) * nn));
    CUDA_CHECK(cudaMemcpy(d_a, h_a, sizeof(float) * nn, cudaMemcpyHostToDevice));
    for (int k = 0; k < n - 1; ++k) {
        int rest = n - k - 1;
        dim3 grid((rest + T - 1) / T, (rest + T - 1) / T);
        lu_update<<<grid, dim3(T, T)>>>(d_a, n, k);
        CUDA_CHECK_LAUNCH();
        lu_scale<<<(rest + T * T - 1) / (T * T), T * T>>>(d_a, n, k);
        CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaMemcpy(h_lu, d_a, sizeof(float) * nn, cudaMemcpyDeviceToHost));

    // Check L U against A (L unit lower triangular, U upper, both packed in h_lu) in
    // double. Diagonal dominance keeps the factors bounded by the entries of A (row sums
    // up to n), so the float factorisation's error is about n * 2^-24 times the row sum
    // per entry; 4 n * 6e-8 * (n + 1) bounds it, while a missing update is of order 1.
    double tol = 4.0 * n * 6e-8 * (n + 1);
    int result = -1;
    for (int i = 0; i < n && result < 0; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            int kmax = i < j ? i : j;
            for (int k = 0; k <= kmax; ++k) {
                double l = k == i ? 1.0 : h_lu[(size_t)i * n + k];
                s += l * h_lu[(size_t)k * n + j];
            }
            if (abs_d(s - h_a[(size_t)i * n + j]) > tol) {
                result = report_fail("(L U)[%d][%d] = %.7g, A has %.7g", i, j, s,
                                     (double)h_a[(size_t)i * n + j]);
                break;
            }
        }
    CUDA_CHECK(cudaFree(d_a));
    free(h_a);
    free(h_lu);
    return result < 0 ? report_pass() : result;
}
