// TMA (sm_90a): a tile transposition through tensor maps made by the driver API's
// cuTensorMapEncodeTiled (reached through cudaGetDriverEntryPoint, as CUTLASS does). Each CTA's thread 0 loads a box of a 68x100 float matrix into
// shared memory with cp.async.bulk.tensor.2d (completing on an mbarrier), the threads
// transpose it in shared memory, undoing the load map's swizzle and applying the store
// map's, and thread 0 stores the transposed box with cp.async.bulk.tensor.2d to the
// 100x68 result. The matrix is not a multiple of the boxes: the loads past its edges
// must fill zeros and the stores past them must write nothing. Once per swizzle mode
// (none, 32, 64 and 128 bytes). Checks every element, the zero fill and a guard region
// after the result, and prints PASS. The maps live in constant memory (a kernel parameter
// map needs __grid_constant__, which clang-19 ignores: it would copy the map to local
// memory, where TMA cannot read it).
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include "mbarrier_wait.cuh"

constexpr int kRows = 68, kCols = 100, kGuard = 64;

// [0] the load map, [1] the store map.
__constant__ CUtensorMap maps[2];

// The byte offset of a dense box's byte `off` in shared memory under a swizzle of `span`
// bytes: 16-byte chunk bits [4, 4+b) XOR row-of-128-bytes bits [7, 7+b) (the box starts
// 1024-byte aligned).
__device__ unsigned swizzled(unsigned off, int span) {
    unsigned b = span == 128 ? 3 : span == 64 ? 2 : span == 32 ? 1 : 0;
    return off ^ (((off >> 7) & ((1u << b) - 1)) << 4);
}

// A box of BH rows of BW floats is loaded from `in` at (x0, y0) and stored transposed
// (BW rows of BH floats) to `out` at (y0, x0).
template <int BW, int BH, int LoadSpan, int StoreSpan>
__global__ void transpose(int* nonzero_fill) {
    __shared__ __align__(1024) float a[BH * BW];
    __shared__ __align__(1024) float t[BW * BH];
    __shared__ __align__(8) unsigned long long bar;
    unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar);
    int x0 = blockIdx.x * BW, y0 = blockIdx.y * BH;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(sbar), "r"(BW * BH * 4) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];"
            :: "r"((unsigned)__cvta_generic_to_shared(a)), "l"(&maps[0]), "r"(x0), "r"(y0), "r"(sbar)
            : "memory");
    }
    __syncthreads();
    while (!try_wait(sbar, 0)) {
    }
    for (int i = threadIdx.x; i < BW * BH; i += blockDim.x) {
        int r = i / BW, c = i % BW;
        float v = a[swizzled(i * 4, LoadSpan) / 4];
        if ((x0 + c >= kCols || y0 + r >= kRows) && v != 0.0f) atomicAdd(nonzero_fill, 1);
        t[swizzled((c * BH + r) * 4, StoreSpan) / 4] = v;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                     :: "l"(&maps[1]), "r"(y0), "r"(x0), "r"((unsigned)__cvta_generic_to_shared(t))
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}

CUtensorMapSwizzle swizzle_of(int span) {
    switch (span) {
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
    }
}

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled;

bool encode(CUtensorMap* map, float* base, unsigned long long rows, unsigned long long cols,
            unsigned box_cols, unsigned box_rows, int span) {
    cuuint64_t dims[2] = {cols, rows};
    cuuint64_t strides[1] = {cols * sizeof(float)};
    cuuint32_t box[2] = {box_cols, box_rows};
    cuuint32_t estrides[2] = {1, 1};
    CUresult r = encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims,
                              strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              swizzle_of(span), CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) printf("cuTensorMapEncodeTiled failed: %d\n", (int)r);
    return r == CUDA_SUCCESS;
}

template <int BW, int BH, int LoadSpan, int StoreSpan>
int run(const float* h_in, float* d_in, float* d_out, int* d_fill) {
    static float h_out[kRows * kCols + kGuard];
    CUtensorMap h_maps[2];
    if (!encode(&h_maps[0], d_in, kRows, kCols, BW, BH, LoadSpan) ||
        !encode(&h_maps[1], d_out, kCols, kRows, BH, BW, StoreSpan))
        return 1;
    cudaMemcpyToSymbol(maps, h_maps, sizeof h_maps);
    cudaMemset(d_out, 0xff, sizeof h_out);
    cudaMemset(d_fill, 0, sizeof(int));
    dim3 grid((kCols + BW - 1) / BW, (kRows + BH - 1) / BH);
    transpose<BW, BH, LoadSpan, StoreSpan><<<grid, 128>>>(d_fill);
    int fill = -1;
    if (cudaError_t err = cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost)) {
        printf("FAILED: %s\n", cudaGetErrorString(err));
        return 1;
    }
    cudaMemcpy(&fill, d_fill, sizeof fill, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kCols; ++c)
            if (h_out[c * kRows + r] != h_in[r * kCols + c] && bad++ < 5)
                printf("box %dx%d swizzle %d/%d: out[%d][%d] = %g, expected %g\n", BW, BH,
                       LoadSpan, StoreSpan, c, r, h_out[c * kRows + r], h_in[r * kCols + c]);
    unsigned guard;
    for (int i = 0; i < kGuard; ++i) {
        memcpy(&guard, &h_out[kRows * kCols + i], 4);
        if (guard != 0xffffffffu && bad++ < 5) printf("guard word %d written: %#x\n", i, guard);
    }
    if (fill != 0) {
        printf("box %dx%d: %d out-of-bounds elements were not zero\n", BW, BH, fill);
        ++bad;
    }
    printf("box %dx%d, swizzle %d/%d: %s\n", BW, BH, LoadSpan, StoreSpan, bad ? "wrong" : "ok");
    return bad;
}

int main() {
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void**)&encode_tiled, cudaEnableDefault,
                                &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
        printf("FAILED: no cuTensorMapEncodeTiled\n");
        return 1;
    }
    static float h_in[kRows * kCols];
    for (int i = 0; i < kRows * kCols; ++i) h_in[i] = (float)(i % 251) + 1.0f;
    float *d_in, *d_out;
    int* d_fill;
    cudaMalloc(&d_in, sizeof h_in);
    cudaMalloc(&d_out, (kRows * kCols + kGuard) * sizeof(float));
    cudaMalloc(&d_fill, sizeof(int));
    cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    // A box wider than 256 elements: refused with CUDA_ERROR_INVALID_VALUE.
    CUtensorMap refused;
    cuuint64_t dim[1] = {1024};
    cuuint32_t wide[1] = {300}, one[1] = {1};
    CUresult r = encode_tiled(&refused, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, d_in, dim, nullptr,
                              wide, one, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    int bad = r != CUDA_ERROR_INVALID_VALUE;
    if (bad) printf("a box of 300 elements: %d, expected CUDA_ERROR_INVALID_VALUE\n", (int)r);
    bad += run<16, 8, 0, 0>(h_in, d_in, d_out, d_fill);
    bad += run<8, 8, 32, 32>(h_in, d_in, d_out, d_fill);
    bad += run<16, 16, 64, 64>(h_in, d_in, d_out, d_fill);
    bad += run<32, 32, 128, 128>(h_in, d_in, d_out, d_fill);
    bad += run<32, 16, 128, 64>(h_in, d_in, d_out, d_fill);
    printf(bad ? "FAILED\n" : "PASS\n");
    return bad ? 1 : 0;
}
