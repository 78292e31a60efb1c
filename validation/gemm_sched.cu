// Block-to-SM logs of the naive matrix product of validation/gemm.cu (issue 53: its blocks live
// for n steps of k and re-read the B lines of the blocks of their column on the same SM, so how
// far apart those blocks run decides the L1's hits). Each block's first thread records the SM,
// %globaltimer at its start, at k = n / 2 and after its loop; the block's end is taken after a
// barrier, as validation/sched.cu does.
//   gemm_sched N BXxBY [BXxBY ...]   writes gemm_sched_N_BXxBY.csv (block,sm,start_ns,mid_ns,end_ns)
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long gtime() { unsigned long long r; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r)); return r; }

__global__ void naive_log(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n, unsigned long long* log) {
  unsigned long long t0 = gtime(), tm = 0;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  bool first = threadIdx.x == 0 && threadIdx.y == 0;
  float s = 0.0f;
  for (int k = 0; k < n; k++) {
    s += a[row * n + k] * b[k * n + col];
    if (first && k == n / 2) tm = gtime();
  }
  c[row * n + col] = s;
  __syncthreads();
  if (first) {
    long blk = blockIdx.x + (long)gridDim.x * blockIdx.y;
    log[4 * blk] = smid(); log[4 * blk + 1] = t0; log[4 * blk + 2] = tm; log[4 * blk + 3] = gtime();
  }
}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: gemm_sched N BXxBY [BXxBY ...]\n"); return 2; }
  int n = atoi(argv[1]);
  float *a, *b, *c;
  CK(cudaMalloc(&a, (size_t)n * n * 4)); CK(cudaMalloc(&b, (size_t)n * n * 4)); CK(cudaMalloc(&c, (size_t)n * n * 4));
  CK(cudaMemset(a, 0, (size_t)n * n * 4)); CK(cudaMemset(b, 0, (size_t)n * n * 4));
  for (int i = 2; i < argc; i++) {
    int bx, by;
    if (sscanf(argv[i], "%dx%d", &bx, &by) != 2) { fprintf(stderr, "bad shape %s\n", argv[i]); return 2; }
    dim3 block(bx, by), grid(n / bx, n / by);
    long blocks = (long)grid.x * grid.y;
    unsigned long long* log; CK(cudaMalloc(&log, blocks * 4 * 8));
    naive_log<<<grid, block>>>(a, b, c, n, log);  // warm-up
    CK(cudaDeviceSynchronize());
    naive_log<<<grid, block>>>(a, b, c, n, log);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> h(blocks * 4);
    CK(cudaMemcpy(h.data(), log, blocks * 4 * 8, cudaMemcpyDeviceToHost));
    char name[128]; snprintf(name, sizeof name, "gemm_sched_%d_%dx%d.csv", n, bx, by);
    FILE* f = fopen(name, "w");
    unsigned long long t = h[1];
    for (long b2 = 0; b2 < blocks; b2++) t = h[4 * b2 + 1] < t ? h[4 * b2 + 1] : t;
    fprintf(f, "block,sm,start_ns,mid_ns,end_ns\n");
    for (long b2 = 0; b2 < blocks; b2++)
      fprintf(f, "%ld,%llu,%llu,%llu,%llu\n", b2, h[4 * b2], h[4 * b2 + 1] - t, h[4 * b2 + 2] - t, h[4 * b2 + 3] - t);
    fclose(f);
    CK(cudaFree(log));
    printf("%d %dx%d: %ld blocks\n", n, bx, by, blocks);
  }
  return 0;
}
