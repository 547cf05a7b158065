struct M { char a; short b; int* p; char c; };
__device__ int gx2;
__device__ M gm = {1, 2, &gx2, 3};
struct P { int a; int* p; };
__device__ P gp2[2] = {{1, &gx2}, {2, &gx2 + 1}};
__global__ void ke(int* o) { o[0] = gm.a + *gm.p + gp2[1].a + *gp2[0].p; }
