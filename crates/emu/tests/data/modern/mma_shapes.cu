// mma.sync shapes beyond f16/bf16, as a CUDA program writes them with inline PTX
// (nvcc -arch=sm_80 -ptx mma_shapes.cu -o mma_shapes.nvcc-sm80.ptx). One warp per kernel;
// each lane gathers its fragments from row-major A (M x K), B (K x N) and C (M x N) with
// the PTX ISA's fragment formulas (groupID g = lane / 4, threadID_in_group t = lane % 4)
// and scatters D row-major, so the test on the host compares D with a CPU product.
#include <cstdint>

// m16n8k8 .tf32: a_i row g + 8 (i % 2), col t + 4 (i / 2); b_i row t + 4 i, col g.
__global__ void tf32_m16n8k8(const float* A, const float* B, const float* C, float* D) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  uint32_t a[4], b[2];
  float c[4], d[4];
  for (int i = 0; i < 4; i++) a[i] = __float_as_uint(A[(g + 8 * (i % 2)) * 8 + t + 4 * (i / 2)]);
  for (int i = 0; i < 2; i++) b[i] = __float_as_uint(B[(t + 4 * i) * 8 + g]);
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
        "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = d[i];
}

// m16n8k4 .tf32: a_i row g + 8 i, col t; b0 row t, col g.
__global__ void tf32_m16n8k4(const float* A, const float* B, const float* C, float* D) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  uint32_t a0 = __float_as_uint(A[g * 4 + t]), a1 = __float_as_uint(A[(g + 8) * 4 + t]);
  uint32_t b0 = __float_as_uint(B[t * 8 + g]);
  float c[4], d[4];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%7,%8,%9,%10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(b0), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = d[i];
}

// m16n8k16 .s8: a_i row g + 8 (i / 4), col 4t + i % 4; b_i row 4t + i, col g.
__global__ void s8_m16n8k16(const int8_t* A, const int8_t* B, const int* C, int* D) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  uint32_t a[2] = {0, 0}, b = 0;
  int c[4], d[4];
  for (int i = 0; i < 8; i++)
    a[i / 4] |= uint32_t(uint8_t(A[(g + 8 * (i / 4)) * 16 + 4 * t + i % 4])) << (8 * (i % 4));
  for (int i = 0; i < 4; i++) b |= uint32_t(uint8_t(B[(4 * t + i) * 8 + g])) << (8 * i);
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%7,%8,%9,%10};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = d[i];
}

// m16n8k32 .u8 x .s8 with .satfinite: a_i row g + 8 ((i / 4) % 2), col 4t + i % 4 +
// 16 (i / 8); b_i row 4t + i % 4 + 16 (i / 4), col g.
__global__ void u8s8_m16n8k32_satfinite(const uint8_t* A, const int8_t* B, const int* C,
                                        int* D) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  int c[4], d[4];
  for (int i = 0; i < 16; i++)
    a[i / 4] |= uint32_t(A[(g + 8 * ((i / 4) % 2)) * 32 + 4 * t + i % 4 + 16 * (i / 8)])
                << (8 * (i % 4));
  for (int i = 0; i < 8; i++)
    b[i / 4] |= uint32_t(uint8_t(B[(4 * t + i % 4 + 16 * (i / 4)) * 8 + g])) << (8 * (i % 4));
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32 {%0,%1,%2,%3}, "
      "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]),
        "r"(c[1]), "r"(c[2]), "r"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = d[i];
}

// m8n8k4 .f64: a0 row g, col t; b0 row t, col g; c_i row g, col 2t + i.
__global__ void f64_m8n8k4(const double* A, const double* B, const double* C, double* D) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  double a = A[g * 4 + t], b = B[t * 8 + g], c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1];
  double d0, d1;
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
               : "=d"(d0), "=d"(d1)
               : "d"(a), "d"(b), "d"(c0), "d"(c1));
  D[g * 8 + 2 * t] = d0;
  D[g * 8 + 2 * t + 1] = d1;
}
