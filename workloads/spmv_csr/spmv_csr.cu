// Sparse matrix-vector product y = A x with A in CSR form, one thread per row. Row
// lengths vary from 0 to 127 (most rows are short, one in sixteen is long), so the
// lanes of a warp leave the row loop at different times and the gathers from x are
// irregular.
#include "../common/workload.h"

__global__ void spmv_csr_scalar(int rows, const int* __restrict__ row_start,
                                const int* __restrict__ cols, const float* __restrict__ vals,
                                const float* __restrict__ x, float* __restrict__ y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float sum = 0.0f;
    for (int j = row_start[row]; j < row_start[row + 1]; ++j) {
        sum += vals[j] * x[cols[j]];
    }
    y[row] = sum;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int rows = large ? 65536 + 100 : 4096 + 100;
    int ncols = rows;
    const int threads = 128;

    Lcg rng(8080u);
    int* h_row_start = (int*)malloc(sizeof(int) * (rows + 1));
    h_row_start[0] = 0;
    for (int r = 0; r < rows; ++r) {
        int len = rng.below(16) == 0 ? 32 + (int)rng.below(96) : (int)rng.below(9);
        h_row_start[r + 1] = h_row_start[r] + len;
    }
    int nnz = h_row_start[rows];
    int* h_cols = (int*)malloc(sizeof(int) * nnz);
    float* h_vals = (float*)malloc(sizeof(float) * nnz);
    float* h_x = (float*)malloc(sizeof(float) * ncols);
    float* h_y = (float*)malloc(sizeof(float) * rows);
    for (int j = 0; j < nnz; ++j) {
        h_cols[j] = (int)rng.below(ncols);
        h_vals[j] = rng.range(-1.0f, 1.0f);
    }
    for (int c = 0; c < ncols; ++c) h_x[c] = rng.range(-2.0f, 2.0f);

    int *d_row_start, *d_cols;
    float *d_vals, *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_row_start, sizeof(int) * (rows + 1)));
    CUDA_CHECK(cudaMalloc(&d_cols, sizeof(int) * nnz));
    CUDA_CHECK(cudaMalloc(&d_vals, sizeof(float) * nnz));
    CUDA_CHECK(cudaMalloc(&d_x, sizeof(float) * ncols));
    CUDA_CHECK(cudaMalloc(&d_y, sizeof(float) * rows));
    CUDA_CHECK(cudaMemcpy(d_row_start, h_row_start, sizeof(int) * (rows + 1), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_cols, h_cols, sizeof(int) * nnz, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_vals, h_vals, sizeof(float) * nnz, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, sizeof(float) * ncols, cudaMemcpyHostToDevice));
    // A sentinel value: a row the kernel skipped would keep it.
    CUDA_CHECK(cudaMemset(d_y, 0xff, sizeof(float) * rows));

    spmv_csr_scalar<<<(rows + threads - 1) / threads, threads>>>(rows, d_row_start, d_cols, d_vals,
                                                                   d_x, d_y);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h_y, d_y, sizeof(float) * rows, cudaMemcpyDeviceToHost));

    // At most 127 terms: the float error is below 127 * 2^-24 * sum|a*x| < 1e-5 * sum|a*x|.
    int result = -1;
    for (int r = 0; r < rows; ++r) {
        double ref = 0.0, mag = 0.0;
        for (int j = h_row_start[r]; j < h_row_start[r + 1]; ++j) {
            double p = (double)h_vals[j] * (double)h_x[h_cols[j]];
            ref += p;
            mag += abs_d(p);
        }
        double got = h_y[r];
        // Written as a negated <= so that a NaN (the sentinel) fails too.
        if (!(abs_d(got - ref) <= 2e-5 * mag + 1e-7)) {
            result = report_fail("y[%d] = %.7g, expected %.7g", r, got, ref);
            break;
        }
    }

    CUDA_CHECK(cudaFree(d_row_start));
    CUDA_CHECK(cudaFree(d_cols));
    CUDA_CHECK(cudaFree(d_vals));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    free(h_row_start);
    free(h_cols);
    free(h_vals);
    free(h_x);
    free(h_y);
    return result < 0 ? report_pass() : result;
}
