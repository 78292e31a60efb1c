// How the L1 treats global loads by their cache operator (PTX ld.global.{ca,cg,cs,lu,cv}, CUDA's
// __ldca, __ldcg, __ldcs, __ldlu, __ldcv, a plain load of a const __restrict__ pointer (ld.global.nc),
// one of a plain pointer (ld.global), __ldg, and a volatile load). Each thread
// reads a[i] and a[i + 1] of floats (the second load's sectors are the first's but at a warp's
// end: an L1 that keeps the first load's lines hits on nearly all of them) and writes their sum.
// Read with ncu (validation/load_cache_ops.sh); data in tests/data/h200/load_cache_ops/.
// Config lines: kernel n block.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
#define K(name, LD)                                                                      \
  __global__ void k_##name(const float* __restrict__ a, float* __restrict__ b, int n) {  \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                       \
    if (i >= n) return;                                                                  \
    b[i] = LD(&a[i]) + LD(&a[i + 1]);                                                    \
  }
#define PLAIN(p) (*(p))
K(plain, PLAIN)
K(ldg, __ldg)
K(ca, __ldca)
K(cg, __ldcg)
K(cs, __ldcs)
K(lu, __ldlu)
K(cv, __ldcv)
__global__ void k_weak(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  b[i] = a[i] + a[i + 1];
}
__global__ void k_volatile(const float* a, float* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const volatile float* v = a;
  b[i] = v[i] + v[i + 1];
}
// the same address loaded twice, in program order, with the first load's value used between:
// the second can only hit if the first load's line stayed in L1
#define K2(name, LD)                                                                     \
  __global__ void k_2_##name(const float* __restrict__ a, float* __restrict__ b, int n) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                       \
    if (i >= n) return;                                                                  \
    float x = LD(&a[i]);                                                                 \
    if (x == 1234.5f) return;                                                            \
    b[i] = x + LD(&a[(i + 32) % n]);                                                     \
  }
K2(plain, PLAIN)
K2(cg, __ldcg)
K2(cs, __ldcs)
K2(cv, __ldcv)

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: load_cache_ops LAUNCHES\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); char line[256];
  if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[32]; int n, bx;
    if (line[0] == '#' || sscanf(line, "%31s %d %d", k, &n, &bx) < 3) continue;
    float *a, *b;
    CK(cudaMalloc(&a, (size_t)(n + 64) * 4)); CK(cudaMalloc(&b, (size_t)n * 4));
    CK(cudaMemset(a, 0, (size_t)(n + 64) * 4));
    dim3 g((n + bx - 1) / bx), blk(bx);
#define L(name) else if (!strcmp(k, #name)) k_##name<<<g, blk>>>(a, b, n);
    if (0) {}
    L(plain) L(weak) L(ldg) L(ca) L(cg) L(cs) L(lu) L(cv) L(volatile) L(2_plain) L(2_cg) L(2_cs) L(2_cv)
    else { printf("unknown kernel %s\n", k); return 1; }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(a)); CK(cudaFree(b));
    printf("%d %s", id++, line);
  }
}
