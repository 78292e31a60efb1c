// DRAM rate versus the number of streams a warp reads and writes at once (issue 53: the D3Q19
// step, 19 load and 19 store streams, ran at 70-81% of the copy rate the model gives it).
// Each kernel walks K streams of n doubles that lie n doubles apart in one allocation: thread i
// reads element i of every stream (a warp instruction: 256 contiguous bytes), then
//   read_kK: adds them up over the warp; lane 0 writes the warp's sum (8 bytes per 256*K read),
//   copy_kK: writes each, scaled, to the same element of K output streams.
// The *_smem48 variants hold 48 KiB of static shared memory per block (4 blocks per SM), to see
// the streams at a lower occupancy. read_kK needs n a multiple of 32 (whole warps in the sum).
// Lifted by the simulator from this file (entry = kernel name; tests/data/h200/streams/).
//   streams LAUNCHES   (lines "kernel n block"; prints "ID line" per launch, as families.cu)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

#define READ_K(K)                                                                              \
  __global__ void read_k##K(const double* __restrict__ a, double* __restrict__ out, int n) {  \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i >= n) return;                                                                        \
    double s = 0.0;                                                                            \
    _Pragma("unroll") for (int k = 0; k < K; k++) s += a[k * n + i];                           \
    _Pragma("unroll") for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o); \
    if ((threadIdx.x & 31) == 0) out[i >> 5] = s;                                              \
  }
#define COPY_K(K)                                                                              \
  __global__ void copy_k##K(const double* __restrict__ a, double* __restrict__ b, int n) {    \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i >= n) return;                                                                        \
    double v[K];                                                                               \
    _Pragma("unroll") for (int k = 0; k < K; k++) v[k] = a[k * n + i];                         \
    _Pragma("unroll") for (int k = 0; k < K; k++) b[k * n + i] = 1.0001 * v[k];                \
  }
#define COPY_K_SMEM48(K)                                                                       \
  __global__ void copy_k##K##_smem48(const double* __restrict__ a, double* __restrict__ b, int n) { \
    __shared__ double pad[6144];                                                               \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i >= n) return;                                                                        \
    pad[threadIdx.x] = 0.0;                                                                    \
    double v[K];                                                                               \
    _Pragma("unroll") for (int k = 0; k < K; k++) v[k] = a[k * n + i];                         \
    _Pragma("unroll") for (int k = 0; k < K; k++) b[k * n + i] = 1.0001 * v[k] + pad[threadIdx.x]; \
  }

READ_K(1) READ_K(2) READ_K(4) READ_K(8) READ_K(16) READ_K(19) READ_K(32)
COPY_K(1) COPY_K(2) COPY_K(4) COPY_K(8) COPY_K(16) COPY_K(19) COPY_K(32)
COPY_K_SMEM48(1) COPY_K_SMEM48(19)

typedef void (*Kernel)(const double*, double*, int);
struct Entry { const char* name; Kernel fn; int streams; };
static const Entry kernels[] = {
  {"read_k1", read_k1, 1}, {"read_k2", read_k2, 2}, {"read_k4", read_k4, 4}, {"read_k8", read_k8, 8},
  {"read_k16", read_k16, 16}, {"read_k19", read_k19, 19}, {"read_k32", read_k32, 32},
  {"copy_k1", copy_k1, 1}, {"copy_k2", copy_k2, 2}, {"copy_k4", copy_k4, 4}, {"copy_k8", copy_k8, 8},
  {"copy_k16", copy_k16, 16}, {"copy_k19", copy_k19, 19}, {"copy_k32", copy_k32, 32},
  {"copy_k1_smem48", copy_k1_smem48, 1}, {"copy_k19_smem48", copy_k19_smem48, 19},
};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: streams LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int n, block;
    if (line[0] == '#' || sscanf(line, "%31s %d %d", k, &n, &block) < 3) continue;
    const Entry* e = 0;
    for (const Entry& c : kernels) if (!strcmp(c.name, k)) e = &c;
    if (!e) { printf("unknown kernel %s\n", k); return 1; }
    size_t elems = (size_t)e->streams * n;
    double *a, *b;
    CK(cudaMalloc(&a, elems * 8)); CK(cudaMalloc(&b, elems * 8));
    CK(cudaMemset(a, 0, elems * 8)); CK(cudaMemset(b, 0, elems * 8));
    e->fn<<<(n + block - 1) / block, block>>>(a, b, n);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(a)); CK(cudaFree(b));
    printf("%d %s", id++, line);
  }
  return 0;
}
