// Helpers shared by the microbenchmarks (latency.cu, l1_geometry.cu, bw_inflight.cu,
// launch_overhead.cu, l1_wavefronts.cu). Each benchmark writes a "runs" CSV: one row per profiled
// kernel launch, in launch order, so that validation/micro_join.py can pair row i with ncu's
// launch ID i (the benchmarks are profiled with a --kernel-name filter that matches exactly the
// launches they list).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long gtime() { unsigned long long r; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r) :: "memory"); return r; }
__device__ __forceinline__ long long clk() { long long r; asm volatile("mov.u64 %0, %%clock64;" : "=l"(r) :: "memory"); return r; }

// Dependent pointer loads: the loaded 8-byte word is the address of the next one.
// ld_ca caches in L1 (and L2), ld_cg in L2 only.
// ld_ca: ld.global (SASS LDG.E.64: a weak load, cached in L1; an explicit ld.global.ca would
// compile to LDG.E.64.STRONG.SM, a plain C++ dereference of a loaded pointer to a generic LD);
// ld_cg: ld.global.cg (LDG.E.64.STRONG.GPU: L2 only).
__device__ __forceinline__ const unsigned long long* ld_ca(const unsigned long long* p) {
  unsigned long long r; asm volatile("ld.global.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory"); return (const unsigned long long*)r;
}
__device__ __forceinline__ const unsigned long long* ld_cg(const unsigned long long* p) {
  unsigned long long r; asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory"); return (const unsigned long long*)r;
}

// Writes the pointer chain: word offs[i]/8 of base holds the address of word offs[(i+1)%n].
__global__ void chain_scatter(unsigned long long* base, const unsigned long long* offs, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  for (; i < n; i += (long)gridDim.x * blockDim.x) {
    long j = (i + 1 == n) ? 0 : i + 1;
    base[offs[i] / 8] = (unsigned long long)base + offs[j];
  }
}

struct Rng {  // splitmix64
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() { uint64_t z = (s += 0x9E3779B97F4A7C15ull); z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
  uint64_t below(uint64_t n) { return next() % n; }
};

// Random permutation of 0..n-1 (Fisher-Yates).
static inline std::vector<uint64_t> random_perm(uint64_t n, Rng& r) {
  std::vector<uint64_t> p(n);
  for (uint64_t i = 0; i < n; i++) p[i] = i;
  for (uint64_t i = n; i > 1; i--) { uint64_t j = r.below(i); uint64_t t = p[i - 1]; p[i - 1] = p[j]; p[j] = t; }
  return p;
}

// Uploads the byte offsets and writes the chain into base (device). Returns the start address.
static inline const unsigned long long* build_chain(unsigned long long* base, const std::vector<uint64_t>& offs) {
  static unsigned long long* d_offs = nullptr; static size_t cap = 0;
  if (offs.size() > cap) { if (d_offs) CK(cudaFree(d_offs)); cap = offs.size(); CK(cudaMalloc(&d_offs, cap * 8)); }
  CK(cudaMemcpy(d_offs, offs.data(), offs.size() * 8, cudaMemcpyHostToDevice));
  chain_scatter<<<1024, 256>>>(base, d_offs, (long)offs.size());
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  return base + offs[0] / 8;
}

static inline bool quick() { const char* q = getenv("QUICK"); return q && *q == '1'; }

static inline void print_device(FILE* f) {
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  int clk_khz = 0, memclk_khz = 0;
  cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&memclk_khz, cudaDevAttrMemoryClockRate, 0);
  fprintf(f, "# device %s sms=%d l2=%d smem/sm=%zu smem/block-optin=%zu maxthr/sm=%d maxblk/sm=%d clock_khz=%d memclock_khz=%d buswidth=%d\n",
          pr.name, pr.multiProcessorCount, pr.l2CacheSize, pr.sharedMemPerMultiprocessor, pr.sharedMemPerBlockOptin,
          pr.maxThreadsPerMultiProcessor, pr.maxBlocksPerMultiProcessor, clk_khz, memclk_khz, pr.memoryBusWidth);
}

// Single-thread pointer chase: `warm` untimed steps, then `steps` timed dependent loads.
// res[0] = clock64 cycles of the timed steps, res[1] = globaltimer ns of them, res[2] = final
// pointer (keeps the chain live), res[3] = SM id. The volatile shared store of the last pointer
// issues only once that load has returned, so each clock read follows the load it brackets.
template <bool CG>
__global__ void lat_chase(const unsigned long long* start, long warm, long steps, unsigned long long* res) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  volatile __shared__ unsigned long long sink;
  const unsigned long long* p = start;
  for (long i = 0; i < warm; i++) p = CG ? ld_cg(p) : ld_ca(p);
  sink = (unsigned long long)p;
  long long t0 = clk();
  unsigned long long g0 = gtime();
#pragma unroll 4
  for (long i = 0; i < steps; i++) p = CG ? ld_cg(p) : ld_ca(p);
  sink = (unsigned long long)p;
  long long t1 = clk();
  unsigned long long g1 = gtime();
  res[0] = (unsigned long long)(t1 - t0);
  res[1] = g1 - g0;
  res[2] = (unsigned long long)p + sink * 0;
  res[3] = smid();
}
