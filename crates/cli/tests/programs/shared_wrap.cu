// 32-bit shared-memory address arithmetic (regsim issue 15, class 1). Threads reach a
// shared array through a base that is negative before a constant displacement is added
// back, the way a dynamic-programming kernel walks a diagonal: nvcc folds the constant
// into the address (`ld.shared.u32 %r, [%rN+68]` with %rN = 0xFFFFFFC0), and the access
// is right only if the address wraps modulo 2^32 as PTX defines for 32-bit addresses.
// `st`, `atom` and `red` take the same address form through inline PTX, since nvcc does
// not always fold their displacement. Prints PASS or FAIL: <reason>; exits 0 on PASS.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void diagonal(const int* in, int* sums, int* out, int* olds, int shift) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    int k = t - shift;  // negative for t < shift
    if (t < 32) sums[t] = s[k + 17] + s[k + 20];  // ld.shared [%rN+68], [%rN+80]
    __syncthreads();
    unsigned base = (unsigned)__cvta_generic_to_shared(s) + 4u * (unsigned)k;
    int v = 0, old = 0;
    if (t < 32) {
        asm volatile("ld.shared.u32 %0, [%1+84];" : "=r"(v) : "r"(base));          // s[k + 21]
        asm volatile("red.shared.add.u32 [%0+68], 1;" ::"r"(base) : "memory");      // s[k + 17]
        asm volatile("atom.shared.add.u32 %0, [%1+72], 1000;" : "=r"(old) : "r"(base) : "memory");  // s[k + 18]
        olds[t] = old;
    }
    __syncthreads();
    if (t < 32) asm volatile("st.shared.u32 [%0+124], %1;" ::"r"(base), "r"(v) : "memory");  // s[k + 31]
    __syncthreads();
    out[t] = s[t];
}

int main() {
    const int shift = 16;
    int h_in[64], h_sums[32], h_out[64], h_olds[32];
    for (int i = 0; i < 64; ++i) h_in[i] = i * 7 + 3;
    int *d_in, *d_sums, *d_out, *d_olds;
    if (cudaMalloc(&d_in, sizeof h_in) != cudaSuccess || cudaMalloc(&d_sums, sizeof h_sums) != cudaSuccess ||
        cudaMalloc(&d_out, sizeof h_out) != cudaSuccess || cudaMalloc(&d_olds, sizeof h_olds) != cudaSuccess)
        return 2;
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    diagonal<<<1, 64>>>(d_in, d_sums, d_out, d_olds, shift);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("FAIL: %s\n", cudaGetErrorName(e)); return 1; }
    cudaMemcpy(h_sums, d_sums, sizeof h_sums, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_olds, d_olds, sizeof h_olds, cudaMemcpyDeviceToHost);
    // Host reference, in the kernel's phases.
    int s[64], v[32];
    for (int i = 0; i < 64; ++i) s[i] = h_in[i];
    for (int t = 0; t < 32; ++t) {
        int k = t - shift, want = s[k + 17] + s[k + 20];
        if (h_sums[t] != want) { printf("FAIL: sums[%d] = %d, want %d\n", t, h_sums[t], want); return 1; }
        v[t] = s[k + 21];
    }
    for (int t = 0; t < 32; ++t) { int k = t - shift; s[k + 17] += 1; s[k + 18] += 1000; }
    for (int t = 0; t < 32; ++t) {
        // s[t + 2] receives +1 from thread t + 1 and +1000 from thread t: the atom's old
        // value is the input plus 0 or 1, whichever order they ran in.
        int k = t - shift, before = h_in[k + 18];
        if (h_olds[t] != before && h_olds[t] != before + 1) {
            printf("FAIL: olds[%d] = %d, want %d or %d\n", t, h_olds[t], before, before + 1); return 1;
        }
    }
    for (int t = 0; t < 32; ++t) s[t - shift + 31] = v[t];
    for (int i = 0; i < 64; ++i)
        if (h_out[i] != s[i]) { printf("FAIL: s[%d] = %d, want %d\n", i, h_out[i], s[i]); return 1; }
    printf("PASS\n");
    return 0;
}
