// Block turnover versus the rounds a warp runs (issue 53, item 3: the time model charges each block
// that takes over a slot `block_turnover_cycles` x rounds / (blocks per SM)^2, linear in the rounds,
// fitted on launches of one or two rounds; star1-zloop's 256-512 rounds per warp put 1024-thread
// blocks 67-99% too slow). One copy of 2^28 doubles (2 GiB each way) cut into blocks that copy
// `rounds` consecutive block-widths each: thread t of block g copies elements
// g * blockDim.x * rounds + k * blockDim.x + t for k < rounds, one load and one dependent store per
// trip (not unrolled: one round per trip). The same bytes and accesses in every launch; only the
// rounds per warp, the block size and the blocks per SM change. copy_rounds_smem48 holds 48 KiB of
// shared memory per block, so 4 blocks share an SM.
// Lifted by the simulator from this file (entry = kernel name; tests/data/h200/turnover/).
//   turnover LAUNCHES   (lines "kernel rounds block"; prints "ID line" per launch, as streams.cu)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

static const int N = 1 << 28;  // doubles per array

__global__ void copy_rounds(const double* __restrict__ a, double* __restrict__ b, int rounds) {
  int base = blockIdx.x * blockDim.x * rounds + threadIdx.x;
#pragma unroll 1
  for (int k = 0; k < rounds; k++) {
    int i = base + k * blockDim.x;
    b[i] = 1.0001 * a[i];
  }
}

__global__ void copy_rounds_smem48(const double* __restrict__ a, double* __restrict__ b, int rounds) {
  __shared__ double pad[6144];
  pad[threadIdx.x] = 0.0;
  int base = blockIdx.x * blockDim.x * rounds + threadIdx.x;
#pragma unroll 1
  for (int k = 0; k < rounds; k++) {
    int i = base + k * blockDim.x;
    b[i] = 1.0001 * a[i] + pad[threadIdx.x];
  }
}

typedef void (*Kernel)(const double*, double*, int);
struct Entry { const char* name; Kernel fn; };
static const Entry kernels[] = {{"copy_rounds", copy_rounds}, {"copy_rounds_smem48", copy_rounds_smem48}};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: turnover LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  double *a, *b;
  CK(cudaMalloc(&a, (size_t)N * 8)); CK(cudaMalloc(&b, (size_t)N * 8));
  CK(cudaMemset(a, 0, (size_t)N * 8)); CK(cudaMemset(b, 0, (size_t)N * 8));
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int rounds, block;
    if (line[0] == '#' || sscanf(line, "%31s %d %d", k, &rounds, &block) < 3) continue;
    const Entry* e = 0;
    for (const Entry& c : kernels) if (!strcmp(c.name, k)) e = &c;
    if (!e) { printf("unknown kernel %s\n", k); return 1; }
    if (N % (rounds * block)) { printf("rounds x block must divide 2^28: %s", line); return 1; }
    e->fn<<<N / (rounds * block), block>>>(a, b, rounds);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
  CK(cudaFree(a)); CK(cudaFree(b));
  return 0;
}
