// Matrix multiplication on the H200 (issue 53: a kernel class code generators and autotuners
// bring every day, and one the time model was never checked on: the same bytes read n times
// over from the caches, a loop of fused multiply-adds, shared-memory tiles behind barriers).
// C = A B for n x n row-major floats, one element of C per thread, in two forms:
//   naive      row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x +
//              threadIdx.x; C[row][col] = sum over k of A[row][k] B[k][col], straight from
//              global memory (a warp reads one A element per k, broadcast where the warp is one
//              row, and a row of B): the L1 and the L2 serve the reuse; the block shape is the
//              launch's
//   tiled<BX, BY>  the textbook shared-memory kernel: a block of BX x BY threads computes a
//              BY x BX tile of C, walking k in steps of BX: each thread loads one element of the
//              A tile (BY x BX) and BX / BY of the B tile (BX x BX), a barrier, BX multiply-adds
//              from shared memory, a barrier; BX and BY are template arguments
// Lifted by the simulator from this file (entry = kernel name; tests/data/h200/gemm/manifest.toml).
//   gemm LAUNCHES   (lines "naive N BX BY" or "tiled_BX_BY N"; prints "ID line" per launch)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

__global__ void naive(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[row * n + k] * b[k * n + col];
    c[row * n + col] = s;
  }
}

template <int BX, int BY>
__global__ void tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  __shared__ float as[BY][BX];
  __shared__ float bs[BX][BX];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * BY + ty;
  int col = blockIdx.x * BX + tx;
  float s = 0.0f;
  for (int k0 = 0; k0 < n; k0 += BX) {
    as[ty][tx] = a[row * n + k0 + tx];
#pragma unroll
    for (int r = 0; r < BX / BY; r++) bs[ty + r * BY][tx] = b[(k0 + ty + r * BY) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BX; k++) s += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * n + col] = s;
}

typedef void (*Kernel)(const float*, const float*, float*, int);
struct Entry { const char* name; Kernel fn; int bx, by; };
#define TILED(X, Y) {"tiled_" #X "_" #Y, tiled<X, Y>, X, Y}
static const Entry tiled_kernels[] = {
  TILED(8, 8), TILED(16, 4), TILED(16, 8), TILED(16, 16), TILED(32, 4), TILED(32, 8),
  TILED(32, 16), TILED(32, 32), TILED(64, 4), TILED(64, 8), TILED(64, 16),
};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: gemm LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  const int max_n = 4096;
  float *a, *b, *c;
  CK(cudaMalloc(&a, (size_t)max_n * max_n * 4)); CK(cudaMalloc(&b, (size_t)max_n * max_n * 4));
  CK(cudaMalloc(&c, (size_t)max_n * max_n * 4));
  CK(cudaMemset(a, 0, (size_t)max_n * max_n * 4)); CK(cudaMemset(b, 0, (size_t)max_n * max_n * 4));
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[64]; int n = 0, bx = 0, by = 0;
    if (line[0] == '#' || sscanf(line, "%63s %d %d %d", k, &n, &bx, &by) < 2) continue;
    if (n < 64 || n > max_n || n % 64) { printf("bad n %d\n", n); return 1; }
    if (!strcmp(k, "naive")) {
      dim3 block(bx, by), grid((n + bx - 1) / bx, (n + by - 1) / by);
      naive<<<grid, block>>>(a, b, c, n);
    } else {
      const Entry* e = 0;
      for (const Entry& t : tiled_kernels) if (!strcmp(t.name, k)) e = &t;
      if (!e) { printf("unknown kernel %s\n", k); return 1; }
      dim3 block(e->bx, e->by), grid(n / e->bx, n / e->by);
      e->fn<<<grid, block>>>(a, b, c, n);
    }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
  return 0;
}
