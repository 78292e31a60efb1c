// What a block barrier between the loads and the stores costs (issue 53, item 3: latency-bound
// regimes; the time model counts each barrier a thread passes as one more round of waiting,
// src/launch/mod.rs `barriers_per_thread`, where the tiled transpose is predicted 8-34% too
// fast). One copy of 2^27 floats (512 MiB each way) cut into blocks that copy R consecutive
// block-widths each: thread t of block g loads elements g * blockDim.x * R + k * blockDim.x + t
// for k < R (unrolled: the R loads issue back to back), then stores them, in four forms:
//   phases_rR        no barrier: each warp stores as soon as its own loads are back
//   sync_rR          __syncthreads() between: every warp of the block waits for the slowest load
//   phases_rR_smem48, sync_rR_smem48   the same with 48 KiB of shared memory per block, so that
//                    at most 4 blocks share an SM (few warps where blocks are small)
//   exchange_rR      the loaded values go through shared memory: stored there, a barrier, and
//                    each thread stores its mirror thread's (the tiled kernels' exchange)
// The same bytes and accesses in every launch; only the barrier, R, the block size and the blocks
// per SM change. Lifted by the simulator from this file (entry = kernel name;
// tests/data/h200/barrier/manifest.toml).
//   barrier LAUNCHES   (lines "kernel block"; prints "ID line" per launch, as turnover.cu)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

static const int N = 1 << 27;  // floats per array

// SYNC: 1 for a barrier between the loads and the stores; SMEM: 1 for 48 KiB of shared memory.
#define COPY_KERNEL(NAME, R, SYNC, SMEM)                                                  \
  __global__ void NAME(const float* __restrict__ a, float* __restrict__ b) {              \
    int base = blockIdx.x * blockDim.x * R + threadIdx.x;                                  \
    float v[R];                                                                            \
    _Pragma("unroll") for (int k = 0; k < R; k++) v[k] = a[base + k * blockDim.x];         \
    if (SMEM) {                                                                            \
      __shared__ float pad[12288];                                                         \
      pad[threadIdx.x] = v[0];                                                             \
      v[0] = pad[threadIdx.x];                                                             \
    }                                                                                      \
    if (SYNC) __syncthreads();                                                             \
    _Pragma("unroll") for (int k = 0; k < R; k++) b[base + k * blockDim.x] = 1.0001f * v[k]; \
  }

// The tiled kernels' form: each warp puts its loaded values in shared memory, the block waits,
// and each thread stores the value its mirror thread in the block loaded (a transpose's exchange,
// without bank conflicts), so the stores wait for the block's slowest load.
#define EXCHANGE_KERNEL(NAME, R)                                                           \
  __global__ void NAME(const float* __restrict__ a, float* __restrict__ b) {              \
    __shared__ float tile[4096];                                                           \
    int base = blockIdx.x * blockDim.x * R + threadIdx.x;                                  \
    float v[R];                                                                            \
    _Pragma("unroll") for (int k = 0; k < R; k++) v[k] = a[base + k * blockDim.x];         \
    _Pragma("unroll") for (int k = 0; k < R; k++) tile[k * blockDim.x + threadIdx.x] = v[k]; \
    __syncthreads();                                                                       \
    int mirror = blockDim.x - 1 - threadIdx.x;                                             \
    _Pragma("unroll") for (int k = 0; k < R; k++)                                          \
      b[base + k * blockDim.x] = 1.0001f * tile[k * blockDim.x + mirror];                  \
  }

COPY_KERNEL(phases_r1, 1, 0, 0)
COPY_KERNEL(sync_r1, 1, 1, 0)
COPY_KERNEL(phases_r4, 4, 0, 0)
COPY_KERNEL(sync_r4, 4, 1, 0)
COPY_KERNEL(phases_r4_smem48, 4, 0, 1)
COPY_KERNEL(sync_r4_smem48, 4, 1, 1)
EXCHANGE_KERNEL(exchange_r1, 1)
EXCHANGE_KERNEL(exchange_r4, 4)

typedef void (*Kernel)(const float*, float*);
struct Entry { const char* name; Kernel fn; int rounds; };
static const Entry kernels[] = {
    {"phases_r1", phases_r1, 1}, {"sync_r1", sync_r1, 1},
    {"phases_r4", phases_r4, 4}, {"sync_r4", sync_r4, 4},
    {"phases_r4_smem48", phases_r4_smem48, 4}, {"sync_r4_smem48", sync_r4_smem48, 4},
    {"exchange_r1", exchange_r1, 1}, {"exchange_r4", exchange_r4, 4}};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: barrier LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  float *a, *b;
  CK(cudaMalloc(&a, (size_t)N * 4)); CK(cudaMalloc(&b, (size_t)N * 4));
  CK(cudaMemset(a, 0, (size_t)N * 4)); CK(cudaMemset(b, 0, (size_t)N * 4));
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int block;
    if (line[0] == '#' || sscanf(line, "%31s %d", k, &block) < 2) continue;
    const Entry* e = 0;
    for (const Entry& c : kernels) if (!strcmp(c.name, k)) e = &c;
    if (!e) { printf("unknown kernel %s\n", k); return 1; }
    if (N % (e->rounds * block)) { printf("R x block must divide 2^27: %s", line); return 1; }
    e->fn<<<N / (e->rounds * block), block>>>(a, b);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
  return 0;
}
