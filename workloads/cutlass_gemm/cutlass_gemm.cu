// arch: sm_80
// cutlass: CUTLASS 4.2's headers (scripts/build-workloads.sh)
// CUTLASS's device-wide GEMM on the tensor cores, unmodified library code compiled from the
// headers of the nvidia-cutlass package (cutlass::gemm::device::Gemm, the 2.x API), two
// instantiations for sm_80:
//
//   f16:  D = alpha A B + beta C, A row-major and B column-major half, C and D row-major
//         float, f32 accumulation; mma.sync m16n8k16 fed by ldmatrix from shared memory
//         that a 3-stage cp.async pipeline fills (threadblock 64x64x32, warps 32x32x32);
//   tf32: the same with float A and B rounded to tf32 by the kernel; mma.sync m16n8k8
//         (threadblock 64x64x16, warps 32x32x16, 3 stages).
//
// The check is exact: every input is a multiple of 1/16 in [-1, 1] (exact in f16 and in
// tf32), so every product is a multiple of 1/256 below 1 in magnitude, every partial sum
// of at most K = 384 of them fits f32's 24 bits exactly, and alpha = 2, beta = 0.5 scale
// exactly; the result does not depend on the order of the accumulation.
#include <vector>

#include <cutlass/gemm/device/gemm.h>
#include <cutlass/numeric_types.h>

#include "../common/workload.h"

using GemmF16 = cutlass::gemm::device::Gemm<
    cutlass::half_t, cutlass::layout::RowMajor, cutlass::half_t, cutlass::layout::ColumnMajor,
    float, cutlass::layout::RowMajor, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<32, 32, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>>;

using GemmTf32 = cutlass::gemm::device::Gemm<
    float, cutlass::layout::RowMajor, float, cutlass::layout::ColumnMajor, float,
    cutlass::layout::RowMajor, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 16>, cutlass::gemm::GemmShape<32, 32, 16>,
    cutlass::gemm::GemmShape<16, 8, 8>>;

static const float kAlpha = 2.0f, kBeta = 0.5f;

// A multiple of 1/16 in [-1, 1].
static float sixteenth(Lcg& rng) { return ((int)rng.below(33) - 16) / 16.0f; }

// Runs `Gemm` on float host inputs converted to its element type, and checks D exactly.
template <typename Gemm, typename Element>
static int run_and_check(const char* what, int m, int n, int k, Lcg& rng) {
    std::vector<float> a(m * k), b(k * n), c(m * n), d(m * n);
    for (auto& x : a) x = sixteenth(rng);
    for (auto& x : b) x = sixteenth(rng);  // column-major: b[col * k + row]
    for (auto& x : c) x = sixteenth(rng);
    std::vector<Element> a_el(a.begin(), a.end()), b_el(b.begin(), b.end());

    Element *d_a, *d_b;
    float *d_c, *d_d;
    CUDA_CHECK(cudaMalloc(&d_a, sizeof(Element) * m * k));
    CUDA_CHECK(cudaMalloc(&d_b, sizeof(Element) * k * n));
    CUDA_CHECK(cudaMalloc(&d_c, sizeof(float) * m * n));
    CUDA_CHECK(cudaMalloc(&d_d, sizeof(float) * m * n));
    CUDA_CHECK(cudaMemcpy(d_a, a_el.data(), sizeof(Element) * m * k, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, b_el.data(), sizeof(Element) * k * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_c, c.data(), sizeof(float) * m * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_d, 0, sizeof(float) * m * n));

    Gemm gemm;
    typename Gemm::Arguments args({m, n, k}, {d_a, k}, {d_b, k}, {d_c, n}, {d_d, n},
                                  {kAlpha, kBeta});
    cutlass::Status status = gemm.can_implement(args);
    if (status == cutlass::Status::kSuccess) status = gemm(args);
    if (status != cutlass::Status::kSuccess) {
        fprintf(stderr, "%s GEMM: %s\n", what, cutlassGetStatusString(status));
        exit(2);
    }
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(d.data(), d_d, sizeof(float) * m * n, cudaMemcpyDeviceToHost));

    int result = 0;
    for (int i = 0; i < m && result == 0; ++i) {
        for (int j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (int l = 0; l < k; ++l) sum += a[i * k + l] * b[j * k + l];
            float want = kAlpha * sum + kBeta * c[i * n + j];
            if (d[i * n + j] != want) {
                result = report_fail("%s D[%d][%d] = %.9g, expected %.9g", what, i, j,
                                     d[i * n + j], want);
                break;
            }
        }
    }
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));
    CUDA_CHECK(cudaFree(d_d));
    return result;
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    const int m = large ? 512 : 128, n = large ? 384 : 128, k = large ? 384 : 128;
    Lcg rng(80);
    if (run_and_check<GemmF16, cutlass::half_t>("f16", m, n, k, rng) != 0) return 1;
    if (run_and_check<GemmTf32, float>("tf32", m, n, k, rng) != 0) return 1;
    return report_pass();
}
