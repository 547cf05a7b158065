// Loads a PTX file through the driver API (libcuda.so.1, opened with dlopen: no CUDA
// headers or libraries needed to build it) and launches one of its kernels with the grid,
// block and dynamic shared memory given, optionally after a cuMemAlloc of a given size;
// prints each call's result. Issue 26: absurd sizes. Build: gcc -O2 launch_probe.c -ldl
// usage: launch_probe PTX KERNEL GX GY GZ BX BY BZ DYNSHARED [MALLOC_BYTES]
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
#define F(name, ...) typedef CUresult (*name##_t)(__VA_ARGS__); static name##_t name;
F(cuInit, unsigned)
F(cuDeviceGet, int *, int)
F(cuCtxCreate, void **, unsigned, int)
F(cuModuleLoadData, void **, const void *)
F(cuModuleGetFunction, void **, void *, const char *)
F(cuLaunchKernel, void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **)
F(cuCtxSynchronize, void)
F(cuMemAlloc, CUdeviceptr *, size_t)
F(cuGetErrorName, CUresult, const char **)
static void *lib;
static void *sym(const char *n) { void *p = dlsym(lib, n); if (!p) { printf("no %s\n", n); exit(3); } return p; }
static CUresult show(const char *what, CUresult r) { const char *s = "?"; cuGetErrorName(r, &s); printf("%s: %s (%d)\n", what, s, r); return r; }
int main(int argc, char **argv) {
    if (argc < 10) { printf("usage\n"); return 2; }
    lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) { printf("dlopen: %s\n", dlerror()); return 3; }
    cuInit = sym("cuInit"); cuDeviceGet = sym("cuDeviceGet"); cuCtxCreate = sym("cuCtxCreate_v2");
    cuModuleLoadData = sym("cuModuleLoadData"); cuModuleGetFunction = sym("cuModuleGetFunction");
    cuLaunchKernel = sym("cuLaunchKernel"); cuCtxSynchronize = sym("cuCtxSynchronize");
    cuMemAlloc = sym("cuMemAlloc_v2"); cuGetErrorName = sym("cuGetErrorName");
    FILE *f = fopen(argv[1], "rb"); if (!f) { printf("cannot open %s\n", argv[1]); return 2; }
    static char ptx[1 << 20]; size_t n = fread(ptx, 1, sizeof ptx - 1, f); ptx[n] = 0; fclose(f);
    int dev; void *ctx, *mod, *fn;
    show("cuInit", cuInit(0)); show("cuDeviceGet", cuDeviceGet(&dev, 0)); show("cuCtxCreate", cuCtxCreate(&ctx, 0, dev));
    if (argc > 10) { CUdeviceptr p = 0; show("cuMemAlloc", cuMemAlloc(&p, strtoull(argv[10], 0, 0))); }
    if (show("cuModuleLoadData", cuModuleLoadData(&mod, ptx))) return 1;
    if (show("cuModuleGetFunction", cuModuleGetFunction(&fn, mod, argv[2]))) return 1;
    CUdeviceptr buf = 0; void *args[] = {&buf};
    CUresult r = show("cuLaunchKernel", cuLaunchKernel(fn, strtoul(argv[3],0,0), strtoul(argv[4],0,0), strtoul(argv[5],0,0),
        strtoul(argv[6],0,0), strtoul(argv[7],0,0), strtoul(argv[8],0,0), strtoul(argv[9],0,0), 0, args, 0));
    CUresult s = show("cuCtxSynchronize", cuCtxSynchronize());
    printf(r == 0 && s == 0 ? "PASS\n" : "FAIL\n");
    return r || s;
}
