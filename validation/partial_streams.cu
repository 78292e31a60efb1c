// Stores that write sectors in part, by the number of streams a warp stores at once (issue 53:
// validation/lbm_parts.cu found the D3Q19 step's 19 store streams, 8 bytes off a sector, cost
// 48.5 + 78.8/W us over aligned ones, while the 2-D Jacobi's one stream off a sector costs
// nothing measurable, and the DRAM then reads and writes about as many sectors more as it
// reads: partly written sectors leaving the L2 before their neighbours complete them).
// Each kernel copies K streams of n doubles, each stream in its own run of `pitch` doubles
// (pitch a multiple of 32: every stream starts on a line); thread i reads element i of every
// stream (a warp instruction: 256 contiguous, line-aligned bytes) and writes it, scaled, to
// element i + shift of the same stream of the output: with shift 1 every warp's store starts 8
// bytes into a sector, so two warps write the sector between them, one at each end; with
// shift 4 it starts a whole sector off (no sector written in part).
// An optional fifth field gives the launch that many KiB of dynamic shared memory (unused), to
// hold fewer blocks on an SM.
//   partial_streams LAUNCHES   (lines "kernel n block shift [smem_kib]"; prints "ID line" per
//   launch)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

#define STORE_K(K)                                                                                   \
  __global__ void shifted_k##K(const double* __restrict__ a, double* __restrict__ b, int n, int pitch, \
                               int shift) {                                                          \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                                   \
    if (i >= n) return;                                                                              \
    double v[K];                                                                                     \
    _Pragma("unroll") for (int k = 0; k < K; k++) v[k] = a[k * pitch + i];                           \
    _Pragma("unroll") for (int k = 0; k < K; k++) b[k * pitch + i + shift] = 1.0001 * v[k];          \
  }

STORE_K(1) STORE_K(2) STORE_K(4) STORE_K(8) STORE_K(19)

typedef void (*Kernel)(const double*, double*, int, int, int);
struct Entry { const char* name; Kernel fn; int streams; };
static const Entry kernels[] = {
  {"shifted_k1", shifted_k1, 1}, {"shifted_k2", shifted_k2, 2}, {"shifted_k4", shifted_k4, 4},
  {"shifted_k8", shifted_k8, 8}, {"shifted_k19", shifted_k19, 19},
};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: partial_streams LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int n, block, shift, smem_kib = 0;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %d %d", k, &n, &block, &shift, &smem_kib) < 4) continue;
    const Entry* e = 0;
    for (const Entry& c : kernels) if (!strcmp(c.name, k)) e = &c;
    if (!e) { printf("unknown kernel %s\n", k); return 1; }
    int pitch = (n + 32 + 31) / 32 * 32;  // room for the shift, and every stream on a line
    size_t elems = (size_t)e->streams * pitch;
    double *a, *b;
    CK(cudaMalloc(&a, elems * 8)); CK(cudaMalloc(&b, elems * 8));
    CK(cudaMemset(a, 0, elems * 8)); CK(cudaMemset(b, 0, elems * 8));
    e->fn<<<(n + block - 1) / block, block, smem_kib * 1024>>>(a, b, n, pitch, shift);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(a)); CK(cudaFree(b));
    printf("%d %s", id++, line);
  }
  return 0;
}
