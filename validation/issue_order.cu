// Warp issue order of loads (issue 13, item 1): does a warp issue its run of independent loads back
// to back, or do the warps of a scheduler interleave their loads?
//
// One block per SM, W warps per block (W = 4..32), every thread issues N independent 8-byte loads
// (inline PTX, so the compiler keeps them together; the SASS is dumped beside the CSV) between two
// clock64 reads, then uses the values and reads the clock a third time. Per warp the log holds the
// SM, the hardware warp slot (%warpid; the scheduler is slot % 4), and the three clocks.
//   greedy (a warp keeps the slot through its run): the [t0, t1] intervals of one scheduler's warps
//   barely overlap and t1 - t0 stays near N issue slots whatever W is;
//   loose round robin: the intervals overlap and t1 - t0 grows with the warps per scheduler.
// Each warp's loads touch their own 256-byte rows (row k of warp w at (w * N + k) * ROW), so the
// loads are full-warp, coalesced and go to L2 like a stencil's first touch (mode 0), or, after a
// warm-up pass over the same rows, hit in L1 (mode 1).
//
//   nvcc -O3 -arch=sm_90 -o issue_order issue_order.cu && ./issue_order > issue_order.csv
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define ROW 32 // doubles per row: one warp's coalesced 8-byte load

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned hw_warp() { unsigned r; asm volatile("mov.u32 %0, %%warpid;" : "=r"(r)); return r; }
__device__ __forceinline__ long long clk() { long long r; asm volatile("mov.u64 %0, %%clock64;" : "=l"(r) :: "memory"); return r; }
__device__ __forceinline__ double ld(const double* p) { double r; asm volatile("ld.global.f64 %0, [%1];" : "=d"(r) : "l"(p) : "memory"); return r; }

template <int N>
__global__ void __launch_bounds__(1024) runs(const double* __restrict__ a, double* sink, long long* log, int warm) {
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, W = blockDim.x / 32;
  const double* base = a + ((long)blockIdx.x * W * N + (long)warp * N) * ROW + lane;
  double acc = 0.0;
  if (warm) {
#pragma unroll
    for (int k = 0; k < N; k++) acc += ld(base + k * ROW);
    __syncthreads();
  }
  double v[N];
  long long t0 = clk();
#pragma unroll
  for (int k = 0; k < N; k++) v[k] = ld(base + k * ROW);
  long long t1 = clk();
#pragma unroll
  for (int k = 0; k < N; k++) acc += v[k];
  long long t2 = clk();
  if (acc == 12345.0) sink[0] = acc; // never true: keeps the loads alive
  if (lane == 0) {
    long long* r = log + 5 * ((long)blockIdx.x * W + warp);
    r[0] = smid(); r[1] = hw_warp(); r[2] = t0; r[3] = t1; r[4] = t2;
  }
}

template <int N>
void run(const double* a, double* sink, long long* dlog, long long* hlog, int sms, int W, int warm) {
  runs<N><<<sms, 32 * W>>>(a, sink, dlog, warm); // first launch: clocks and TLB warm
  runs<N><<<sms, 32 * W>>>(a, sink, dlog, warm);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hlog, dlog, (size_t)sms * W * 5 * 8, cudaMemcpyDeviceToHost));
  for (int b = 0; b < sms; b++)
    for (int w = 0; w < W; w++) {
      long long* r = hlog + 5 * ((long)b * W + w);
      printf("%d,%d,%d,%d,%d,%lld,%lld,%lld,%lld,%lld\n", N, W, warm, b, w, r[0], r[1], r[2], r[3], r[4]);
    }
}

int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  long n = (long)sms * 32 * 32 * ROW; // N <= 32 rows per warp, 32 warps per block
  double *a, *sink; long long* dlog;
  CK(cudaMalloc(&a, n * 8)); CK(cudaMemset(a, 0, n * 8)); CK(cudaMalloc(&sink, 8));
  CK(cudaMalloc(&dlog, (size_t)sms * 32 * 5 * 8));
  long long* hlog = (long long*)malloc((size_t)sms * 32 * 5 * 8);
  printf("loads,warps,warm,block,warp,sm,hw_warp,t0,t1,t2\n");
  int Ws[] = {4, 8, 16, 32};
  for (int warm = 0; warm <= 1; warm++)
    for (int W : Ws) {
      run<8>(a, sink, dlog, hlog, sms, W, warm);
      run<16>(a, sink, dlog, hlog, sms, W, warm);
      run<24>(a, sink, dlog, hlog, sms, W, warm);
    }
  return 0;
}
