// What makes a missing load cost the L1 data pipe more passes than the bank rule (issue 53, item 4:
// the L1 wavefronts' worst cases). The read-only streams of streams.cu (`read_kK`: K loads of doubles
// a thread, every line missing, then a warp sum and one 8-byte store by lane 0) take 2.00 passes a
// load, the bank rule's, while the copies (`copy_kK`: K loads, then K full stores) and the stencils
// pay about 0.28 more per missing line (docs/model.md, "The read-only streams pay nothing for their
// misses"). Here the loads stay those of read_kK and only what the warp does after them changes:
//   rK_none        no store at all (the sum is kept alive by an empty asm that takes it);
//   rK_lane0shfl   read_kK itself: the warp's sum by ten shuffles, lane 0 stores it (one sector);
//   rK_lane0       lane 0 stores its own sum, no shuffles (one sector a warp);
//   rK_fullS       S full-warp stores of the sum to S output streams (8 sectors each), S = 1..8;
//   rK_indep1      one full-warp store of the thread's index, issued before the loads;
//   rK_inplace1    the sum stored back over the first stream's element (a line just loaded);
//   rK_smemS       the sum stored to shared memory S times (S full-warp shared stores of doubles, to
//                  S arrays), then lane 0 reads its neighbour's first value back and stores it as
//                  rK_lane0 does (one sector a warp): do shared stores take the passes global
//                  stores take after missing loads? (the tiled matrix products and tree reductions)
//   rK_smemlane0   rK_lane0shfl with lane 0 putting the warp's sum in shared memory first (a block
//                  reduction's warp sums), then storing a neighbour warp's;
//   fK_lane0shfl, fK_full1  rK_lane0shfl and rK_full1 on floats (one line a warp instruction).
// Thread i reads element i of K streams of n doubles that lie n apart in one allocation (a warp
// instruction: 256 contiguous bytes, two lines); the output streams lie n apart in another.
// Measured on an H100 SXM (the H200 was asked for), 2026-12-07: tests/data/h100/replay_stores/. ptxas
// drops rK_none's and rK_indep1's loads (the empty asm does not keep them) and narrows rK_lane0's to
// lane 0, so only rK_lane0shfl, rK_fullS and rK_inplace1 load as the PTX says. What they show: a
// warp's missing loads cost the bank rule's passes and nothing more; a full store after them about
// one pass more (0.4 for lane 0's one-sector store, 0.38 a store at 8 a warp).
// The shared-store and float kernels (validation/replay_smem_launches.txt) on an H200, 2026-12-07:
// tests/data/h200/replay_smem/: a full shared store after the loads costs about 0.3 passes a warp,
// a full global store 0.8, beyond lane 0's sum (docs/validation.md, "Shared stores count as writes").
// Lifted by the simulator from this file (entry = kernel name; tests/l1_replays.rs, its PTX).
//   replay_stores LAUNCHES   (lines "kernel n block"; prints "ID line" per launch, as streams.cu)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

#define SUM(K)                                                                                 \
  int i = blockIdx.x * blockDim.x + threadIdx.x;                                               \
  if (i >= n) return;                                                                          \
  double s = 0.0;                                                                              \
  _Pragma("unroll") for (int k = 0; k < K; k++) s += a[k * n + i];

#define KERNELS(K)                                                                             \
  __global__ void r##K##_none(const double* __restrict__ a, double* __restrict__ out, int n) { \
    SUM(K)                                                                                     \
    asm volatile("" :: "d"(s));                                                                 \
  }                                                                                            \
  __global__ void r##K##_lane0shfl(const double* __restrict__ a, double* __restrict__ out, int n) { \
    SUM(K)                                                                                     \
    _Pragma("unroll") for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o); \
    if ((threadIdx.x & 31) == 0) out[i >> 5] = s;                                              \
  }                                                                                            \
  __global__ void r##K##_lane0(const double* __restrict__ a, double* __restrict__ out, int n) { \
    SUM(K)                                                                                     \
    if ((threadIdx.x & 31) == 0) out[i >> 5] = s;                                              \
  }                                                                                            \
  __global__ void r##K##_full1(const double* __restrict__ a, double* __restrict__ out, int n) { \
    SUM(K)                                                                                     \
    out[i] = 1.0001 * s;                                                                       \
  }                                                                                            \
  __global__ void r##K##_indep1(const double* __restrict__ a, double* __restrict__ out, int n) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i >= n) return;                                                                        \
    out[i] = (double)i;                                                                        \
    asm volatile("" ::: "memory");                                                             \
    double s = 0.0;                                                                            \
    _Pragma("unroll") for (int k = 0; k < K; k++) s += a[k * n + i];                           \
    asm volatile("" :: "d"(s));                                                                 \
  }

KERNELS(1) KERNELS(2) KERNELS(4) KERNELS(8) KERNELS(16) KERNELS(32)

#define FULL(K, S)                                                                             \
  __global__ void r##K##_full##S(const double* __restrict__ a, double* __restrict__ out, int n) { \
    SUM(K)                                                                                     \
    _Pragma("unroll") for (int t = 0; t < S; t++) out[t * n + i] = (1.0 + t) * s;              \
  }
FULL(8, 2) FULL(8, 4) FULL(8, 8)

#define INPLACE(K)                                                                             \
  __global__ void r##K##_inplace1(double* __restrict__ a, double* __restrict__ out, int n) {   \
    SUM(K)                                                                                     \
    a[i] = 1.0001 * s;                                                                         \
  }
INPLACE(8)

#define SMEM(K, S)                                                                             \
  __global__ void r##K##_smem##S(const double* __restrict__ a, double* __restrict__ out, int n) { \
    __shared__ double sh[S][256];                                                              \
    SUM(K)                                                                                     \
    _Pragma("unroll") for (int t = 0; t < S; t++) sh[t][threadIdx.x] = (1.0 + t) * s;         \
    __syncwarp();                                                                              \
    if ((threadIdx.x & 31) == 0) out[i >> 5] = sh[0][threadIdx.x ^ 1];                         \
  }
SMEM(1, 1) SMEM(4, 1) SMEM(8, 1) SMEM(16, 1) SMEM(32, 1) SMEM(8, 4)

// rK_lane0shfl with the warp's sum put in shared memory by lane 0 first, as a block reduction's
// warps leave their sums (8 bytes a warp to shared memory, then lane 0's one-sector store).
#define SMEMLANE0(K)                                                                           \
  __global__ void r##K##_smemlane0(const double* __restrict__ a, double* __restrict__ out, int n) { \
    __shared__ double sh[8];                                                                   \
    SUM(K)                                                                                     \
    _Pragma("unroll") for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o); \
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = s;                                     \
    __syncwarp();                                                                              \
    if ((threadIdx.x & 31) == 0) out[i >> 5] = sh[(threadIdx.x >> 5) ^ 1];                     \
  }
SMEMLANE0(8) SMEMLANE0(32)

// The same on floats (a warp's load or store: 128 contiguous bytes, one line); the float arrays
// take the double arrays' memory, n floats a stream.
#define FLOATS(K)                                                                              \
  __global__ void f##K##_lane0shfl(const double* __restrict__ ad, double* __restrict__ outd, int n) { \
    const float* a = (const float*)ad; float* out = (float*)outd;                              \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i >= n) return;                                                                        \
    float s = 0.0f;                                                                            \
    _Pragma("unroll") for (int k = 0; k < K; k++) s += a[k * n + i];                           \
    _Pragma("unroll") for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o); \
    if ((threadIdx.x & 31) == 0) out[i >> 5] = s;                                              \
  }                                                                                            \
  __global__ void f##K##_full1(const double* __restrict__ ad, double* __restrict__ outd, int n) { \
    const float* a = (const float*)ad; float* out = (float*)outd;                              \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i >= n) return;                                                                        \
    float s = 0.0f;                                                                            \
    _Pragma("unroll") for (int k = 0; k < K; k++) s += a[k * n + i];                           \
    out[i] = 1.0001f * s;                                                                      \
  }
FLOATS(2) FLOATS(8)

typedef void (*Kernel)(const double*, double*, int);
struct Entry { const char* name; Kernel fn; int streams; int outputs; };
#define ROW(K) {"r" #K "_none", r##K##_none, K, 1}, {"r" #K "_lane0shfl", r##K##_lane0shfl, K, 1}, \
  {"r" #K "_lane0", r##K##_lane0, K, 1}, {"r" #K "_full1", r##K##_full1, K, 1},                 \
  {"r" #K "_indep1", r##K##_indep1, K, 2}
static const Entry kernels[] = {
  ROW(1), ROW(2), ROW(4), ROW(8), ROW(16), ROW(32),
  {"r8_full2", r8_full2, 8, 2}, {"r8_full4", r8_full4, 8, 4}, {"r8_full8", r8_full8, 8, 8},
  {"r8_inplace1", (Kernel)r8_inplace1, 8, 1},
  {"r1_smem1", r1_smem1, 1, 1}, {"r4_smem1", r4_smem1, 4, 1}, {"r8_smem1", r8_smem1, 8, 1},
  {"r16_smem1", r16_smem1, 16, 1}, {"r32_smem1", r32_smem1, 32, 1}, {"r8_smem4", r8_smem4, 8, 1},
  {"r8_smemlane0", r8_smemlane0, 8, 1}, {"r32_smemlane0", r32_smemlane0, 32, 1},
  {"f2_lane0shfl", f2_lane0shfl, 2, 1}, {"f2_full1", f2_full1, 2, 1},
  {"f8_lane0shfl", f8_lane0shfl, 8, 1}, {"f8_full1", f8_full1, 8, 1},
};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: replay_stores LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int n, block;
    if (line[0] == '#' || sscanf(line, "%31s %d %d", k, &n, &block) < 3) continue;
    const Entry* e = 0;
    for (const Entry& c : kernels) if (!strcmp(c.name, k)) e = &c;
    if (!e) { printf("unknown kernel %s\n", k); return 1; }
    size_t in = (size_t)e->streams * n, out = (size_t)e->outputs * n;
    double *a, *b;
    CK(cudaMalloc(&a, in * 8)); CK(cudaMalloc(&b, out * 8));
    CK(cudaMemset(a, 0, in * 8)); CK(cudaMemset(b, 0, out * 8));
    e->fn<<<(n + block - 1) / block, block>>>(a, b, n);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(a)); CK(cudaFree(b));
    printf("%d %s", id++, line);
  }
  return 0;
}
