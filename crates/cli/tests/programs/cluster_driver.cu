// Thread-block clusters through the driver API (sm_90): loads a kernel's PTX text at run
// time, launches it with cuLaunchKernelEx and the cluster dimension attribute, and asks
// cuOccupancyMaxActiveClusters / cuOccupancyMaxPotentialClusterSize how many clusters
// fit. Host-only C++: build with  g++ -x c++ cluster_driver.cu -lcuda  (CUDA 12's cuda.h).
//
// pairs: grid 8 x 64 threads in clusters of 2; CTA b writes 100 + b to its shared word,
// and after a cluster barrier reads its partner's (rank ^ 1) through mapa and
// ld.shared::cluster; thread 0 writes rank | cluster id << 8 | cluster size << 16 and
// the partner's word. A cluster of 9 CTAs (above the portable 8) is refused.
#include <cstdio>
#include <cuda.h>

static const char *ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry pairs(.param .u64 ids, .param .u64 partner)
{
    .reg .pred %p;
    .reg .b32 %r<12>;
    .reg .b64 %rd<6>;
    .shared .align 4 .u32 word;
    ld.param.u64 %rd1, [ids];
    ld.param.u64 %rd2, [partner];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %cluster_ctarank;
    mov.u32 %r4, %clusterid.x;
    mov.u32 %r5, %cluster_nctarank;
    setp.ne.u32 %p, %r2, 0;
    add.u32 %r6, %r1, 100;
    @!%p st.shared.u32 [word], %r6;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    xor.b32 %r7, %r3, 1;
    mov.u32 %r8, word;
    mapa.shared::cluster.u32 %r9, %r8, %r7;
    ld.shared::cluster.u32 %r10, [%r9];
    @%p bra done;
    shl.b32 %r4, %r4, 8;
    shl.b32 %r5, %r5, 16;
    or.b32 %r11, %r3, %r4;
    or.b32 %r11, %r11, %r5;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    st.global.u32 [%rd4], %r11;
    add.s64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r10;
done:
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    ret;
}
)";

static int failures = 0;
static void check(CUresult r, const char *what) {
    if (r != CUDA_SUCCESS) {
        const char *name = "?";
        cuGetErrorName(r, &name);
        printf("%s: %s\n", what, name);
        failures++;
    }
}
#define CU(call) check((call), #call)

static CUlaunchConfig config(unsigned grid, unsigned block, unsigned cluster,
                             CUlaunchAttribute *attr) {
    CUlaunchConfig c = {};
    c.gridDimX = grid;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = block;
    c.blockDimY = c.blockDimZ = 1;
    attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr->value.clusterDim.x = cluster;
    attr->value.clusterDim.y = attr->value.clusterDim.z = 1;
    c.attrs = attr;
    c.numAttrs = 1;
    return c;
}

int main() {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    CU(cuCtxCreate(&ctx, 0, dev));
    CU(cuModuleLoadData(&mod, ptx));
    CU(cuModuleGetFunction(&fn, mod, "pairs"));
    const unsigned n = 8;
    unsigned ids[n], partner[n];
    CUdeviceptr d_ids, d_partner;
    CU(cuMemAlloc(&d_ids, sizeof ids));
    CU(cuMemAlloc(&d_partner, sizeof partner));
    void *args[] = {&d_ids, &d_partner};
    CUlaunchAttribute attr;
    CUlaunchConfig c = config(n, 64, 2, &attr);
    CU(cuLaunchKernelEx(&c, fn, args, nullptr));
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(ids, d_ids, sizeof ids));
    CU(cuMemcpyDtoH(partner, d_partner, sizeof partner));
    for (unsigned b = 0; b < n; b++) {
        unsigned want = (b % 2) | (b / 2) << 8 | 2u << 16;
        if (ids[b] != want || partner[b] != 100 + (b ^ 1)) {
            printf("CTA %u: ids %#x (want %#x), partner %u (want %u)\n", b, ids[b], want,
                   partner[b], 100 + (b ^ 1));
            failures++;
        }
    }
    CUlaunchConfig nine = config(9, 64, 9, &attr);
    CUresult r = cuLaunchKernelEx(&nine, fn, args, nullptr);
    printf("a cluster of 9: %s\n",
           r == CUDA_ERROR_INVALID_CLUSTER_SIZE ? "CUDA_ERROR_INVALID_CLUSTER_SIZE" : "other");
    int active = -1, potential = -1;
    CUlaunchConfig q = config(64, 256, 4, &attr);
    CU(cuOccupancyMaxActiveClusters(&active, fn, &q));
    CU(cuOccupancyMaxPotentialClusterSize(&potential, fn, &q));
    printf("clusters of 4 x 256 threads resident: %d; largest cluster: %d\n", active, potential);
    CU(cuMemFree(d_ids));
    CU(cuMemFree(d_partner));
    CU(cuCtxDestroy(ctx));
    printf(failures == 0 ? "PASS\n" : "FAIL\n");
    return failures != 0;
}
