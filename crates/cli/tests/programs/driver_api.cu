// A driver-API program: it compiles nothing itself, but loads a kernel's PTX text at run
// time (as NVRTC users and kernel compilers do) through libcuda.so.1 and launches it.
// Host-only C++: build with  g++ driver_api.cu -x c++ -lcuda  (any CUDA's cuda.h).
#include <cstdio>
#include <cstring>
#include <cuda.h>

static const char *ptx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry scale(.param .u64 out, .param .u64 in, .param .f32 k, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<5>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<7>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    ld.param.f32 %f1, [k];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r2, %r2, %r3, %r4;
    setp.ge.u32 %p, %r2, %r1;
    @%p bra done;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    add.s64 %rd5, %rd1, %rd3;
    ld.global.f32 %f2, [%rd4];
    mul.f32 %f2, %f2, %f1;
    st.global.f32 [%rd5], %f2;
done:
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

int main() {
    CUdevice dev;
    CUcontext ctx, current = nullptr;
    CUmodule mod;
    CUfunction fn;
    char name[64];
    int major = 0, minor = 0;
    check(cuDeviceGet(&dev, 0) == CUDA_ERROR_NOT_INITIALIZED ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN,
          "calls before cuInit fail");
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    CU(cuDeviceGetName(name, sizeof name, dev));
    CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    printf("device %s, compute capability %d.%d\n", name, major, minor);
    CU(cuCtxCreate(&ctx, 0, dev));
    CU(cuCtxGetCurrent(&current));
    if (current != ctx) { printf("cuCtxGetCurrent: not the created context\n"); failures++; }
    CU(cuModuleLoadDataEx(&mod, ptx, 0, nullptr, nullptr));
    CU(cuModuleGetFunction(&fn, mod, "scale"));
    if (cuModuleGetFunction(&fn, mod, "missing") != CUDA_ERROR_NOT_FOUND) {
        printf("a missing kernel is not CUDA_ERROR_NOT_FOUND\n");
        failures++;
    }
    CU(cuModuleGetFunction(&fn, mod, "scale"));
    // PTX that does not parse fails at load, naming the line.
    CUmodule bad;
    CUresult r = cuModuleLoadData(&bad, ".version 7.0\n.target sm_70\n.address_size 64\n"
                                        ".visible .entry k() { frobnicate; }\n");
    printf("bad PTX: %s\n", r == CUDA_ERROR_INVALID_PTX ? "CUDA_ERROR_INVALID_PTX" : "other");

    const unsigned n = 1000;
    float h[n], back[n];
    for (unsigned i = 0; i < n; i++) h[i] = i;
    CUdeviceptr in, out;
    CU(cuMemAlloc(&in, n * sizeof(float)));
    CU(cuMemAlloc(&out, n * sizeof(float)));
    CU(cuMemcpyHtoD(in, h, sizeof h));
    CU(cuMemsetD32(out, 0, n));
    float k = 2.5f;
    unsigned count = n;
    void *args[] = {&out, &in, &k, &count};
    CU(cuLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(back, out, sizeof back));
    int wrong = 0;
    for (unsigned i = 0; i < n; i++) wrong += back[i] != 2.5f * i;
    if (wrong) { printf("%d wrong values\n", wrong); failures++; }
    CU(cuMemFree(in));
    CU(cuMemFree(out));
    CU(cuModuleUnload(mod));
    CU(cuCtxDestroy(ctx));
    printf(failures == 0 ? "PASS\n" : "FAIL\n");
    return failures != 0;
}
