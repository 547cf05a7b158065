// Prints every kind of device address a program sees: cudaMalloc, managed and pinned
// memory, module variables (cudaGetSymbolAddress), a __managed__ variable, device-side
// malloc, and generic shared and local addresses. regsim lays device memory out at fixed
// simulated addresses, so the output is the same in every run whatever the host does
// (address randomisation, host allocations). HOST_BALLAST_BYTES in the environment: bytes
// of host memory to allocate and touch first (an unrelated allocation that moves the host
// heap).
#include <cstdio>
#include <cstdlib>
#include <cstring>

__device__ int dev_var[64];
__managed__ int managed_var;
__constant__ float const_var[4];

__global__ void addresses(unsigned long long* out, const int* in, int n) {
    __shared__ int tile[32];
    int local[8];
    int t = threadIdx.x;
    tile[t % 32] = in[t % n];
    local[t % 8] = tile[t % 32];
    __syncthreads();
    if (t == 0) {
        int* heap = (int*)malloc(64);
        out[0] = (unsigned long long)heap;
        out[1] = (unsigned long long)tile;
        out[2] = (unsigned long long)local;
        out[3] = (unsigned long long)dev_var;
        out[4] = (unsigned long long)&managed_var;
        heap[0] = local[0];
        dev_var[0] = heap[0] + 1;
        free(heap);
    }
    managed_var = n;
}

int main() {
    const char* ballast_env = getenv("HOST_BALLAST_BYTES");
    size_t ballast = ballast_env ? strtoull(ballast_env, nullptr, 0) : 0;
    char* host = nullptr;
    if (ballast > 0) {
        host = (char*)malloc(ballast);
        memset(host, 1, ballast);
    }
    const int n = 256;
    int* in = nullptr;
    unsigned long long* out = nullptr;
    float* managed = nullptr;
    float* pinned = nullptr;
    void* sym = nullptr;
    void* csym = nullptr;
    if (cudaMalloc(&in, n * sizeof(int)) != cudaSuccess ||
        cudaMalloc(&out, 8 * sizeof(unsigned long long)) != cudaSuccess ||
        cudaMallocManaged(&managed, 1024) != cudaSuccess ||
        cudaMallocHost(&pinned, 1024) != cudaSuccess ||
        cudaGetSymbolAddress(&sym, dev_var) != cudaSuccess ||
        cudaGetSymbolAddress(&csym, const_var) != cudaSuccess) {
        printf("FAIL: allocation\n");
        return 1;
    }
    int h[n];
    for (int i = 0; i < n; ++i) h[i] = i;
    cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
    managed[0] = 1.5f;
    pinned[0] = 2.5f;
    addresses<<<2, 64>>>(out, in, n);
    unsigned long long back[8] = {0};
    if (cudaMemcpy(back, out, sizeof back, cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("FAIL: copy back\n");
        return 1;
    }
    printf("cudaMalloc in      %p\n", (void*)in);
    printf("cudaMalloc out     %p\n", (void*)out);
    printf("managed            %p\n", (void*)managed);
    printf("pinned             %p\n", (void*)pinned);
    printf("__device__ symbol  %p\n", sym);
    printf("__constant__ symbol %p\n", csym);
    printf("__managed__ var    %p\n", (void*)&managed_var);
    printf("device malloc      %#llx\n", back[0]);
    printf("shared (generic)   %#llx\n", back[1]);
    printf("local (generic)    %#llx\n", back[2]);
    printf("dev_var in kernel  %#llx\n", back[3]);
    printf("managed in kernel  %#llx\n", back[4]);
    bool ok = back[3] == (unsigned long long)sym && back[4] == (unsigned long long)&managed_var &&
              managed_var == n && managed[0] == 1.5f && pinned[0] == 2.5f && back[0] != 0;
    free(host);
    printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
