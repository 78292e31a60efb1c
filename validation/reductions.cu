// Block reductions on the H200 (issue 53: a kernel class users bring every day, read-mostly with
// block barriers): what the barriers of a reduction cost. The time model counted each barrier a
// thread passes as one more round of waiting (src/launch/mod.rs `barriers_per_thread`); measured
// here, a barrier costs a warp about 100 cycles (`[timing] barrier_cycles`, docs/validation.md
// "Block reductions: a barrier is not a round"). Every kernel sums n = 2^27 floats (512 MiB) into one partial sum per
// block; thread t of block g first adds up the G elements g * B * G + k * B + t (k < G, unrolled:
// the G loads issue back to back), then the block combines its B values in one of three ways:
//   tree<B, G>   the textbook shared-memory tree: log2(B) halving steps, a __syncthreads() after each
//   shfl<B, G>   a warp-shuffle sum in each warp, the warps' sums through shared memory, one barrier,
//                and the first warp sums those (one barrier in all)
//   dot<B, G>    shfl's combine over the products of two arrays (2^27 floats each)
// and thread 0 stores the block's sum. B is a template parameter (the tree's steps unrolled) and
// the launch's block size. Lifted by the simulator from this file (entry = kernel name;
// tests/data/h200/reductions/manifest.toml).
//   reductions LAUNCHES   (lines "kernel"; e.g. "tree_256_4"; prints "ID line" per launch)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

static const int N = 1 << 27;  // floats per array

template <int B, int G>
__global__ void tree(const float* __restrict__ a, float* __restrict__ out) {
  __shared__ float part[B];
  int base = blockIdx.x * B * G + threadIdx.x;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < G; k++) s += a[base + k * B];
  part[threadIdx.x] = s;
  __syncthreads();
#pragma unroll
  for (int step = B / 2; step > 0; step >>= 1) {
    if (threadIdx.x < step) part[threadIdx.x] += part[threadIdx.x + step];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

// A warp's sum, left in every lane.
__device__ __forceinline__ float warp_sum(float s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}

// The warps' sums of `s` through shared memory, one barrier; thread 0 stores the block's.
template <int B>
__device__ __forceinline__ void block_sum(float s, float* __restrict__ out) {
  __shared__ float warps[B / 32];
  s = warp_sum(s);
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    float w = threadIdx.x < B / 32 ? warps[threadIdx.x] : 0.0f;
    w = warp_sum(w);
    if (threadIdx.x == 0) out[blockIdx.x] = w;
  }
}

template <int B, int G>
__global__ void shfl(const float* __restrict__ a, float* __restrict__ out) {
  int base = blockIdx.x * B * G + threadIdx.x;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < G; k++) s += a[base + k * B];
  block_sum<B>(s, out);
}

template <int B, int G>
__global__ void dot(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out) {
  int base = blockIdx.x * B * G + threadIdx.x;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < G; k++) s += a[base + k * B] * b[base + k * B];
  block_sum<B>(s, out);
}

typedef void (*One)(const float*, float*);
typedef void (*Two)(const float*, const float*, float*);
struct Entry { const char* name; One one; Two two; int block, per_thread; };
#define ONE(K, B, G) {#K "_" #B "_" #G, K<B, G>, 0, B, G}
#define TWO(K, B, G) {#K "_" #B "_" #G, 0, K<B, G>, B, G}
#define SIZES(M, K) M(K, 64, 1), M(K, 128, 1), M(K, 256, 1), M(K, 512, 1), M(K, 1024, 1), \
                    M(K, 64, 4), M(K, 128, 4), M(K, 256, 4), M(K, 512, 4), M(K, 1024, 4)
static const Entry kernels[] = {SIZES(ONE, tree), SIZES(ONE, shfl), SIZES(TWO, dot)};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: reductions LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  float *a, *b, *out;
  CK(cudaMalloc(&a, (size_t)N * 4)); CK(cudaMalloc(&b, (size_t)N * 4));
  CK(cudaMalloc(&out, (size_t)N * 4));
  CK(cudaMemset(a, 0, (size_t)N * 4)); CK(cudaMemset(b, 0, (size_t)N * 4));
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[64];
    if (line[0] == '#' || sscanf(line, "%63s", k) < 1) continue;
    const Entry* e = 0;
    for (const Entry& c : kernels) if (!strcmp(c.name, k)) e = &c;
    if (!e) { printf("unknown kernel %s\n", k); return 1; }
    int grid = N / (e->block * e->per_thread);
    if (e->one) e->one<<<grid, e->block>>>(a, out);
    else e->two<<<grid, e->block>>>(a, b, out);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
  return 0;
}
