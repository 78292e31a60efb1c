// How fast one warp issues its own instructions (issue 53: the time model's per-warp issue floor).
// Each of an SM's four schedulers issues at most one warp instruction a cycle, shared by its
// warps (the `issue` limiter, validation/issue_bound.cu: 3.96 a cycle per SM). Whether a warp
// alone also issues at most one a cycle (no dual issue), and how long a dependent chain waits,
// sets how long a warp with few companions spends on its own instructions.
//   fma_chains<C>   each thread runs ITER steps of C independent FMA chains (unrolled 16 times),
//                   times its loop with clock64 and writes the cycles; the sums are stored so
//                   that nothing is dead. One block of W warps per SM (W = 1, 2, 4, 8, 16), C = 1,
//                   2, 4, 8, 16.
// Prints "warps_per_sm chains fma_per_warp cycles cycles_per_fma_per_warp warp_fma_per_sm_cycle":
// the slowest warp's cycles, over the FMAs each warp issued (the loop's few other instructions
// are under 2 % of them at 16-fold unrolling, counted in SASS: cuobjdump -sass).
//   nvcc -O3 -arch=sm_90 -o warp_issue warp_issue.cu && ./warp_issue
// Written 2026-12-06 for the rule docs/validation.md tries ("Constants refitted keeping every
// report"); run on the H100 (tests/data/h100/warp_issue/): one warp an SM issues 1.05-1.19
// cycles an FMA with 4-16 chains (at most one instruction a cycle), 4.46 with one (the FMA's
// latency), and four warps an SM 3.81 FMAs a cycle with 16 chains.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

constexpr int ITER = 4096;

template <int C>
__global__ void fma_chains(float* out, long long* cycles, float a, float b) {
  float acc[C];
#pragma unroll
  for (int c = 0; c < C; ++c) acc[c] = threadIdx.x * 0.001f + c;
  __syncwarp();
  long long start = clock64();
#pragma unroll 16
  for (int i = 0; i < ITER; ++i) {
#pragma unroll
    for (int c = 0; c < C; ++c) acc[c] = fmaf(acc[c], a, b);
  }
  long long end = clock64();
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < C; ++c) s += acc[c];
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  out[gid] = s;
  if (threadIdx.x % 32 == 0) cycles[gid / 32] = end - start;
}

template <int C>
int run(int sms, int warps) {
  int threads = warps * 32, blocks = sms;
  float* out;
  long long* cycles;
  CK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  CK(cudaMalloc(&cycles, sizeof(long long) * blocks * warps));
  fma_chains<C><<<blocks, threads>>>(out, cycles, 0.999f, 0.001f);  // warm-up
  fma_chains<C><<<blocks, threads>>>(out, cycles, 0.999f, 0.001f);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<long long> h(blocks * warps);
  CK(cudaMemcpy(h.data(), cycles, sizeof(long long) * h.size(), cudaMemcpyDeviceToHost));
  long long worst = 0;
  for (long long c : h) worst = c > worst ? c : worst;
  double fma = double(ITER) * C;
  printf("%d %d %.0f %lld %.3f %.3f\n", warps, C, fma, worst, worst / fma, fma * warps / worst);
  CK(cudaFree(out));
  CK(cudaFree(cycles));
  return 0;
}

int main() {
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  printf("warps_per_sm chains fma_per_warp cycles cycles_per_fma_per_warp warp_fma_per_sm_cycle\n");
  for (int w : {1, 2, 4, 8, 16}) {
    if (run<1>(sms, w) || run<2>(sms, w) || run<4>(sms, w) || run<8>(sms, w) || run<16>(sms, w)) return 1;
  }
  return 0;
}
