// How the naive matrix product's L1 misses depend on the L1's size and on the blocks an SM holds
// (issue 53, docs/validation.md "Matrix products": the H200's 1-D blocks miss 113-119 M sectors
// at n = 1024 where the simulation misses 55-87 M, and validation/inflight_share.cu rules out
// blocks missing each other's fills). The kernel is gemm.cu's `naive`, with dynamic shared
// memory it does not use, so that:
//   carveout C (percent of the unified 256 KiB given to shared memory) sets the L1's size at a
//   fixed occupancy (no shared memory per block: the driver may still pick its own);
//   shared memory S bytes a block under a fixed carveout sets the blocks an SM holds at one L1
//   size.
//   a sixth number G, where given, launches only the first G rows of blocks (the grid's y), so
//   that the launch is one wave or a few (gemm_l1_waves_launches.txt).
//   gemm_l1 LAUNCHES   (lines "naive N BX BY S C [G]"; prints "ID line" per launch)
// ncu's launch__shared_mem_config_size tells the carveout the driver chose, and
// launch__occupancy_limit_shared_mem the blocks it allowed.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

__global__ void naive(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  extern __shared__ float unused[];
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[row * n + k] * b[k * n + col];
    if (n < 0) s += unused[threadIdx.x];  // never: keeps the array declared
    c[row * n + col] = s;
  }
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: gemm_l1 LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  const int max_n = 2048;
  float *a, *b, *c;
  CK(cudaMalloc(&a, (size_t)max_n * max_n * 4)); CK(cudaMalloc(&b, (size_t)max_n * max_n * 4));
  CK(cudaMalloc(&c, (size_t)max_n * max_n * 4));
  CK(cudaMemset(a, 0, (size_t)max_n * max_n * 4)); CK(cudaMemset(b, 0, (size_t)max_n * max_n * 4));
  CK(cudaFuncSetAttribute(naive, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    int n = 0, bx = 0, by = 0, smem = 0, carve = 0, rows = 0;
    if (line[0] == '#' || sscanf(line, "naive %d %d %d %d %d %d", &n, &bx, &by, &smem, &carve, &rows) < 5) continue;
    if (n < 64 || n > max_n || n % 64) { printf("bad n %d\n", n); return 1; }
    CK(cudaFuncSetAttribute(naive, cudaFuncAttributePreferredSharedMemoryCarveout, carve));
    dim3 block(bx, by), grid((n + bx - 1) / bx, rows > 0 ? rows : (n + by - 1) / by);
    naive<<<grid, block, smem>>>(a, b, c, n);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
  return 0;
}
