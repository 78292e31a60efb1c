// Does the L1 data pipe overlap its work with DRAM traffic, or do the two add up? (issue 53,
// "Time": on both GPUs the L1-limited star4 launches whose DRAM time comes close to their L1 time
// run slower than the larger of the two, and those far below it faster.)
// One wave of persistent blocks (132 SMs x 8 blocks of 256 threads on the H200, or B per SM) walks
// n rows; per
// row every thread
//   - reads D doubles from D streams of n doubles each (one warp instruction: 256 contiguous
//     bytes, read once: DRAM traffic; or, with M, L2 hits), and
//   - reads W doubles from one 16 KiB window that every block reads, 256 bytes per instruction,
//     each 264 doubles on from the one before (wrapping), so that no two trips read the same
//     places and the compiler cannot merge them, and after the window's first pass every one
//     hits in L1: 2 data-pipe wavefronts each and no traffic below the L1.
// D and W are template parameters (every load unrolled); the loads are independent of one
// another, their XOR stored once per thread. The time against the L1's wavefronts at one per SM
// cycle and the DRAM's bytes at its rate tells whether they overlap (max) or add.
//   l1_dram_overlap N [B [M]]   (n = 2^N rows, B blocks per SM, 8 by default; with M, the
//   streams hold 2^M doubles each and row i reads their element i mod 2^M: 2^19 puts all six in
//   the L2, so that the loads that miss in L1 hit there; prints "kernel D W" per launch in ncu's
//   order)
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)

// Loads as volatile asm, so that the compiler keeps each in its place; combined by XOR, so that
// no FP64 pipe limits.
__device__ __forceinline__ unsigned long long load(const double* p) {
  unsigned long long v;
  asm volatile("ld.global.b64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

template <int D, int W>
__global__ void k_mix(const double* __restrict__ big, const double* __restrict__ windows,
                      unsigned long long* __restrict__ out, long n, long m) {
  const long stride = (long)gridDim.x * blockDim.x;
  unsigned long long acc = 0;
  long trip = 0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride, trip++) {
#pragma unroll
    for (int d = 0; d < D; d++) acc ^= load(big + d * m + (i & (m - 1)));
#pragma unroll
    for (int w = 0; w < W; w++) acc ^= load(windows + (((unsigned)(trip * W + w) * 264u + threadIdx.x) & 2047u));
  }
  out[blockIdx.x * (long)blockDim.x + threadIdx.x] = acc;
}

template <int D, int W>
void launch(const double* big, const double* win, unsigned long long* out, long n, long m,
            int blocks) {
  k_mix<D, W><<<blocks, 256>>>(big, win, out, n, m);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  printf("k_mix %d %d\n", D, W);
}

#define ROW(D) launch<D, 0>(big, win, out, n, m, blocks); launch<D, 8>(big, win, out, n, m, blocks); \
  launch<D, 16>(big, win, out, n, m, blocks); launch<D, 24>(big, win, out, n, m, blocks);          \
  launch<D, 32>(big, win, out, n, m, blocks); launch<D, 48>(big, win, out, n, m, blocks);

int main(int argc, char** argv) {
  const long n = 1L << (argc > 1 ? atoi(argv[1]) : 25);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = sms * (argc > 2 ? atoi(argv[2]) : 8);
  const long m = argc > 3 ? 1L << atoi(argv[3]) : n;
  double *big, *win;
  unsigned long long* out;
  CK(cudaMalloc(&big, 6 * m * sizeof(double)));
  CK(cudaMalloc(&win, 2048 * sizeof(double)));
  CK(cudaMalloc(&out, (long)blocks * 256 * sizeof(unsigned long long)));
  CK(cudaMemset(big, 0, 6 * m * sizeof(double)));
  CK(cudaMemset(win, 0, 2048 * sizeof(double)));
  launch<1, 0>(big, win, out, n, m, blocks);  // warm-up (first touch of the pages)
  ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(6)
  return 0;
}
