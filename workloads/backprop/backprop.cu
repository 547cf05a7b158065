// One training step of a two-layer perceptron's first layer, as back-propagation does it:
// (1) forward: each 16x16 CTA multiplies a 16-input slice of the input by its 16x16 block
// of the weight matrix and reduces the products over the inputs in shared memory (a tree
// of four halvings), writing one partial sum per hidden unit and input slice;
// (2) a small kernel adds the partial sums, applies the sigmoid and computes each hidden
// unit's error term against a target; (3) every weight moves by
// eta * delta_j * x_i + momentum * (its previous change), the change being kept.
#include "../common/workload.h"

#define T 16

__global__ void __launch_bounds__(T * T)
layer_forward(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ partial,
              int hidden) {
    __shared__ float prod[T][T];
    int i = blockIdx.y * T + threadIdx.y;  // input
    int j = blockIdx.x * T + threadIdx.x;  // hidden unit
    prod[threadIdx.y][threadIdx.x] = x[i] * w[(size_t)i * hidden + j];
    __syncthreads();
    for (int half = T / 2; half > 0; half /= 2) {
        if (threadIdx.y < half) prod[threadIdx.y][threadIdx.x] += prod[threadIdx.y + half][threadIdx.x];
        __syncthreads();
    }
    if (threadIdx.y == 0) partial[(size_t)blockIdx.y * hidden + j] = prod[0][threadIdx.x];
}

__global__ void layer_finish(const float* __restrict__ partial, const float* __restrict__ target,
                             float* __restrict__ out, float* __restrict__ delta, int slices,
                             int hidden) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= hidden) return;
    float s = 0.0f;
    for (int b = 0; b < slices; ++b) s += partial[(size_t)b * hidden + j];
    float o = 1.0f / (1.0f + expf(-s));
    out[j] = o;
    delta[j] = o * (1.0f - o) * (target[j] - o);
}

__global__ void __launch_bounds__(T * T)
adjust_weights(const float* __restrict__ x, const float* __restrict__ delta, float* __restrict__ w,
               float* __restrict__ prev, int hidden, float eta, float momentum) {
    int i = blockIdx.y * T + threadIdx.y;
    int j = blockIdx.x * T + threadIdx.x;
    size_t at = (size_t)i * hidden + j;
    float change = fmaf(eta * delta[j], x[i], momentum * prev[at]);
    w[at] += change;
    prev[at] = change;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int inputs = large ? 16384 : 2048;  // multiples of T
    int hidden = large ? 64 : 32;
    int slices = inputs / T;
    const float eta = 0.3f, momentum = 0.3f;
    size_t nw = (size_t)inputs * hidden;

    float* h_x = (float*)malloc(sizeof(float) * inputs);
    float* h_w = (float*)malloc(sizeof(float) * nw);
    float* h_prev = (float*)malloc(sizeof(float) * nw);
    float* h_t = (float*)malloc(sizeof(float) * hidden);
    Lcg rng(808u);
    for (int i = 0; i < inputs; ++i) h_x[i] = rng.range(0.0f, 1.0f);
    float scale = 4.0f / sqrtf((float)inputs);
    for (size_t k = 0; k < nw; ++k) {
        h_w[k] = rng.range(-scale, scale);
        h_prev[k] = rng.range(-0.01f, 0.01f);
    }
    for (int j = 0; j < hidden; ++j) h_t[j] = rng.range(0.0f, 1.0f);

    float *d_x, *d_w, *d_prev, *d_t, *d_partial, *d_out, *d_delta;
    CUDA_CHECK(cudaMalloc(&d_x, sizeof(float) * inputs));
    CUDA_CHECK(cudaMalloc(&d_w, sizeof(float) * nw));
    CUDA_CHECK(cudaMalloc(&d_prev, sizeof(float) * nw));
    CUDA_CHECK(cudaMalloc(&d_t, sizeof(float) * hidden));
    CUDA_CHECK(cudaMalloc(&d_partial, sizeof(float) * slices * hidden));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float) * hidden));
    CUDA_CHECK(cudaMalloc(&d_delta, sizeof(float) * hidden));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, sizeof(float) * inputs, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_w, h_w, sizeof(float) * nw, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_prev, h_prev, sizeof(float) * nw, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_t, h_t, sizeof(float) * hidden, cudaMemcpyHostToDevice));

    dim3 block(T, T), grid(hidden / T, slices);
    layer_forward<<<grid, block>>>(d_x, d_w, d_partial, hidden);
    CUDA_CHECK_LAUNCH();
    layer_finish<<<(hidden + 63) / 64, 64>>>(d_partial, d_t, d_out, d_delta, slices, hidden);
    CUDA_CHECK_LAUNCH();
    adjust_weights<<<grid, block>>>(d_x, d_delta, d_w, d_prev, hidden, eta, momentum);
    CUDA_CHECK_LAUNCH();
    float* got_out = (float*)malloc(sizeof(float) * hidden);
    float* got_w = (float*)malloc(sizeof(float) * nw);
    CUDA_CHECK(cudaMemcpy(got_out, d_out, sizeof(float) * hidden, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(got_w, d_w, sizeof(float) * nw, cudaMemcpyDeviceToHost));

    // The sum of `inputs` products, each below scale, errs by about inputs * 2^-24 times
    // sum |x w| (below 1e-4 absolute here), and the sigmoid's slope is at most 1/4; the
    // weights then move by eta * delta * x with |delta| <= 1/4.
    double* delta = (double*)malloc(sizeof(double) * hidden);
    int result = -1;
    for (int j = 0; j < hidden && result < 0; ++j) {
        double s = 0.0, mag = 0.0;
        for (int i = 0; i < inputs; ++i) {
            double p = (double)h_x[i] * h_w[(size_t)i * hidden + j];
            s += p;
            mag += abs_d(p);
        }
        double o = 1.0 / (1.0 + exp(-s));
        delta[j] = o * (1.0 - o) * (h_t[j] - o);
        if (abs_d(got_out[j] - o) > 2e-7 * inputs * mag / 4 + 1e-6)
            result = report_fail("output %d = %.7g, expected %.7g", j, got_out[j], o);
    }
    for (size_t k = 0; k < nw && result < 0; ++k) {
        int i = (int)(k / hidden), j = (int)(k % hidden);
        double want = h_w[k] + eta * delta[j] * h_x[i] + momentum * h_prev[k];
        if (abs_d(got_w[k] - want) > 1e-6) {
            result = report_fail("w[%d][%d] = %.7g, expected %.7g", i, j, got_w[k], want);
            break;
        }
    }
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_prev));
    CUDA_CHECK(cudaFree(d_t));
    CUDA_CHECK(cudaFree(d_partial));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_delta));
    free(h_x);
    free(h_w);
    free(h_prev);
    free(h_t);
    free(got_out);
    free(got_w);
    free(delta);
    return result < 0 ? report_pass() : result;
}
