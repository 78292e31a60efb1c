// Throughput of global atomics that contend for few addresses: how long the L2 takes to apply
// reductions (RED) when many warps update the same words, lines or slices. The histogram of
// validation/new_kernels.cu (2^24 int atomicAdd into 256 bins) ran 5.05 ms on the H100 where the
// time model, which has no limiter for it, said 51 us (docs/model.md, "Atomics").
// Each config line: kernel nbins block. n = 2^22 threads, each applying REPS = 4 updates in a
// loop that is not unrolled, update r of thread i at index j = i + r * n (2^24 updates in all),
// to bins[f(j) % nbins] where f is the kernel's pattern:
//   lanes:  j          a warp's 32 lanes on 32 consecutive words (one line of 4 sectors once
//                      nbins >= 32), consecutive warps on consecutive lines
//   bins7:  7 * j      the histogram's pattern: a warp on 32 words 7 apart (7 lines)
//   warp:   j / 32     a warp's 32 lanes all on one word (32 one-sector requests, not merged)
//   rand:   hash(j)    scattered
//   lanes_f32, lanes_f64: `lanes` adding floats and doubles
//   lanes_w: `lanes` with the result used (ATOM instead of RED)
// The bins are zeroed before every launch (outside the profiled kernel) and checked after it.
// Read with ncu at base clocks (validation/atomics_contention.sh); data in
// tests/data/h200/atomics_contention/.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)

constexpr unsigned N = 1u << 22;
constexpr unsigned REPS = 4;

__device__ __forceinline__ unsigned hash32(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
  return x;
}

#define KERNEL(name, T, one, index)                                                    \
  __global__ void name(T* bins, unsigned nbins) {                                      \
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;                                \
    _Pragma("unroll 1") for (unsigned r = 0; r < REPS; r++) {                          \
      unsigned j = i + r * N;                                                          \
      atomicAdd(&bins[(index) % nbins], one);                                          \
    }                                                                                  \
  }
KERNEL(k_lanes, int, 1, j)
KERNEL(k_bins7, int, 1, 7u * j)
KERNEL(k_warp, int, 1, j / 32)
KERNEL(k_rand, int, 1, hash32(j))
KERNEL(k_lanes_f32, float, 1.0f, j)
KERNEL(k_lanes_f64, double, 1.0, j)

// ATOM: the old value is used (kept only when it is never equal to a value it cannot take).
__global__ void k_lanes_w(int* bins, unsigned nbins, int* sink) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 0;
#pragma unroll 1
  for (unsigned r = 0; r < REPS; r++) acc += atomicAdd(&bins[(i + r * N) % nbins], 1);
  if (acc == -1) sink[0] = acc;
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: %s LAUNCHES\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "r");
  if (!f) { printf("cannot open %s\n", argv[1]); return 2; }
  unsigned max_bins = 1u << 24;
  void* bins; int* sink;
  CK(cudaMalloc(&bins, (size_t)max_bins * 8));
  CK(cudaMalloc(&sink, 4));
  char k[64]; unsigned nbins, bx; int id = 0;
  while (fscanf(f, "%63s %u %u", k, &nbins, &bx) == 3) {
    if (nbins < 1 || nbins > max_bins || N % bx) { printf("bad line %d\n", id); return 2; }
    CK(cudaMemset(bins, 0, (size_t)max_bins * 8));
    dim3 g(N / bx), b(bx);
    bool f64 = false, f32 = false;
    if (!strcmp(k, "lanes")) k_lanes<<<g, b>>>((int*)bins, nbins);
    else if (!strcmp(k, "bins7")) k_bins7<<<g, b>>>((int*)bins, nbins);
    else if (!strcmp(k, "warp")) k_warp<<<g, b>>>((int*)bins, nbins);
    else if (!strcmp(k, "rand")) k_rand<<<g, b>>>((int*)bins, nbins);
    else if (!strcmp(k, "lanes_f32")) { k_lanes_f32<<<g, b>>>((float*)bins, nbins); f32 = true; }
    else if (!strcmp(k, "lanes_f64")) { k_lanes_f64<<<g, b>>>((double*)bins, nbins); f64 = true; }
    else if (!strcmp(k, "lanes_w")) k_lanes_w<<<g, b>>>((int*)bins, nbins, sink);
    else { printf("unknown kernel %s\n", k); return 2; }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    // Every update counted once.
    double total = 0;
    if (f64) {
      double* h = (double*)malloc((size_t)nbins * 8);
      CK(cudaMemcpy(h, bins, (size_t)nbins * 8, cudaMemcpyDeviceToHost));
      for (unsigned x = 0; x < nbins; x++) total += h[x];
      free(h);
    } else if (f32) {
      float* h = (float*)malloc((size_t)nbins * 4);
      CK(cudaMemcpy(h, bins, (size_t)nbins * 4, cudaMemcpyDeviceToHost));
      for (unsigned x = 0; x < nbins; x++) total += h[x];
      free(h);
    } else {
      int* h = (int*)malloc((size_t)nbins * 4);
      CK(cudaMemcpy(h, bins, (size_t)nbins * 4, cudaMemcpyDeviceToHost));
      for (unsigned x = 0; x < nbins; x++) total += h[x];
      free(h);
    }
    // Floats lose counts once a bin passes 2^24; only the integer kernels must be exact.
    if (!f32 && total != (double)N * REPS) { printf("ID %d %s %u: sum %.0f\n", id, k, nbins, total); return 1; }
    printf("ID %d %s %u %u\n", id, k, nbins, bx);
    id++;
  }
  return 0;
}
