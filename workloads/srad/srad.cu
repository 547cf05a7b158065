// Speckle-reducing anisotropic diffusion on an image, two kernels per iteration: the first
// computes each pixel's four directional differences and its diffusion coefficient from
// the local gradient and Laplacian (a division-heavy run of 32-bit arithmetic, clamped to
// [0, 1]); the second updates the image with the divergence of coefficient times
// difference, reading the coefficients of its south and east neighbours. Borders
// replicate the edge pixel. q0^2, the speckle scale, is fixed from the initial image.
#include "../common/workload.h"

#define TX 32
#define TY 8

__global__ void __launch_bounds__(TX * TY)
srad_coeff(const float* __restrict__ img, float* __restrict__ dn, float* __restrict__ ds,
           float* __restrict__ dw, float* __restrict__ de, float* __restrict__ coeff, int rows,
           int cols, float q0sqr) {
    int x = blockIdx.x * TX + threadIdx.x, y = blockIdx.y * TY + threadIdx.y;
    if (x >= cols || y >= rows) return;
    int i = y * cols + x;
    float j = img[i];
    float n = img[(y > 0 ? y - 1 : 0) * cols + x] - j;
    float s = img[(y < rows - 1 ? y + 1 : y) * cols + x] - j;
    float w = img[y * cols + (x > 0 ? x - 1 : 0)] - j;
    float e = img[y * cols + (x < cols - 1 ? x + 1 : x)] - j;
    float g2 = (n * n + s * s + w * w + e * e) / (j * j);
    float l = (n + s + w + e) / j;
    float num = 0.5f * g2 - 0.0625f * l * l;
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);
    float c = 1.0f / (1.0f + (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr)));
    dn[i] = n;
    ds[i] = s;
    dw[i] = w;
    de[i] = e;
    coeff[i] = fminf(fmaxf(c, 0.0f), 1.0f);
}

__global__ void __launch_bounds__(TX * TY)
srad_update(float* __restrict__ img, const float* __restrict__ dn, const float* __restrict__ ds,
            const float* __restrict__ dw, const float* __restrict__ de,
            const float* __restrict__ coeff, int rows, int cols, float lambda) {
    int x = blockIdx.x * TX + threadIdx.x, y = blockIdx.y * TY + threadIdx.y;
    if (x >= cols || y >= rows) return;
    int i = y * cols + x;
    float cn = coeff[i], cw = cn;
    float cs = coeff[(y < rows - 1 ? y + 1 : y) * cols + x];
    float ce = coeff[y * cols + (x < cols - 1 ? x + 1 : x)];
    float div = cn * dn[i] + cs * ds[i] + cw * dw[i] + ce * de[i];
    img[i] += 0.25f * lambda * div;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int rows = large ? 512 : 160, cols = large ? 512 : 192;
    int iterations = large ? 6 : 2;
    const float lambda = 0.5f;
    int n = rows * cols;

    float* h_img = (float*)malloc(sizeof(float) * n);
    double* ref = (double*)malloc(sizeof(double) * n);
    double* r_c = (double*)malloc(sizeof(double) * n);
    double* r_d = (double*)malloc(sizeof(double) * 4 * n);
    Lcg rng(2718u);
    // A smooth image times multiplicative speckle, values in about [0.5, 3].
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) {
            float base = 1.5f + 0.8f * sinf(0.05f * x) * cosf(0.07f * y);
            h_img[y * cols + x] = base * rng.range(0.7f, 1.3f);
            ref[y * cols + x] = h_img[y * cols + x];
        }
    double mean = 0.0, sq = 0.0;
    for (int i = 0; i < n; ++i) {
        mean += ref[i];
        sq += ref[i] * ref[i];
    }
    mean /= n;
    float q0sqr = (float)((sq / n - mean * mean) / (mean * mean));

    float *d_img, *d_c, *d_d;
    CUDA_CHECK(cudaMalloc(&d_img, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_c, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&d_d, sizeof(float) * 4 * n));
    CUDA_CHECK(cudaMemcpy(d_img, h_img, sizeof(float) * n, cudaMemcpyHostToDevice));
    dim3 block(TX, TY), grid((cols + TX - 1) / TX, (rows + TY - 1) / TY);
    for (int it = 0; it < iterations; ++it) {
        srad_coeff<<<grid, block>>>(d_img, d_d, d_d + n, d_d + 2 * n, d_d + 3 * n, d_c, rows, cols,
                                    q0sqr);
        CUDA_CHECK_LAUNCH();
        srad_update<<<grid, block>>>(d_img, d_d, d_d + n, d_d + 2 * n, d_d + 3 * n, d_c, rows,
                                     cols, lambda);
        CUDA_CHECK_LAUNCH();
        for (int y = 0; y < rows; ++y)
            for (int x = 0; x < cols; ++x) {
                int i = y * cols + x;
                double j = ref[i];
                double dn = ref[(y > 0 ? y - 1 : 0) * cols + x] - j;
                double ds = ref[(y < rows - 1 ? y + 1 : y) * cols + x] - j;
                double dw = ref[y * cols + (x > 0 ? x - 1 : 0)] - j;
                double de = ref[y * cols + (x < cols - 1 ? x + 1 : x)] - j;
                double g2 = (dn * dn + ds * ds + dw * dw + de * de) / (j * j);
                double l = (dn + ds + dw + de) / j;
                double num = 0.5 * g2 - 0.0625 * l * l;
                double den = 1.0 + 0.25 * l;
                double q = num / (den * den);
                double c = 1.0 / (1.0 + (q - q0sqr) / (q0sqr * (1.0 + q0sqr)));
                r_c[i] = c < 0 ? 0 : (c > 1 ? 1 : c);
                r_d[i] = dn;
                r_d[n + i] = ds;
                r_d[2 * n + i] = dw;
                r_d[3 * n + i] = de;
            }
        for (int y = 0; y < rows; ++y)
            for (int x = 0; x < cols; ++x) {
                int i = y * cols + x;
                double cs = r_c[(y < rows - 1 ? y + 1 : y) * cols + x];
                double ce = r_c[y * cols + (x < cols - 1 ? x + 1 : x)];
                double div = r_c[i] * r_d[i] + cs * r_d[n + i] + r_c[i] * r_d[2 * n + i] +
                             ce * r_d[3 * n + i];
                ref[i] += 0.25 * lambda * div;
            }
    }
    CUDA_CHECK(cudaMemcpy(h_img, d_img, sizeof(float) * n, cudaMemcpyDeviceToHost));

    // The coefficient is a chain of a dozen float operations including three divisions on
    // values of order 1 (about 1e-6 relative); the update moves a pixel by at most
    // lambda times a few, so each iteration adds about 1e-5 absolute. 5e-5 per iteration
    // bounds that, while a wrong neighbour changes pixels by about 1e-2.
    double tol = 5e-5 * iterations;
    int result = -1;
    for (int i = 0; i < n; ++i) {
        if (!(abs_d(h_img[i] - ref[i]) <= tol)) {
            result = report_fail("pixel (%d, %d) = %.7g, expected %.7g", i / cols, i % cols,
                                 h_img[i], ref[i]);
            break;
        }
    }
    CUDA_CHECK(cudaFree(d_img));
    CUDA_CHECK(cudaFree(d_c));
    CUDA_CHECK(cudaFree(d_d));
    free(h_img);
    free(ref);
    free(r_c);
    free(r_d);
    return result < 0 ? report_pass() : result;
}
