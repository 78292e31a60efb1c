// Achievable bandwidth versus bytes in flight per SM.
// Every SM runs exactly k resident blocks of B threads (grid = k x SMs blocks and no limit but the
// occupancy; each block logs its SM id so that the blocks-per-SM spread is checked and written
// down), i.e. w = k*B/32 warps per SM. Each thread issues U independent 8-byte loads (a double
// each; consecutive lanes read consecutive doubles, so a warp instruction reads 256 contiguous bytes)
// before it adds them up, then moves on by U x (all threads) doubles: at most w*32*U*8 bytes of
// loads in flight per SM. The sum is stored only if it equals an impossible value, so nothing is
// optimised away and nothing is written.
//   level dram: a cold read (ncu --cache-control all flushes L2 before every launch) of
//               min(2 GiB, T*U*512*8) bytes, each double once. Variants: read (plain loads, through
//               L1 as the stencils' loads), read_cg (ld.global.cg), write (stores only, 1 GiB or
//               T*U*2048*8 bytes, whichever is less), copy (U loads then U stores).
//   level l2:   a 16 MiB buffer (indices wrap at 16 MiB) already in L2 (an unprofiled kernel reads it
//               before every launch; profiled with --cache-control none), about 20 passes over it
//               (T*U*iters*8 ~ 320 MiB, at least 4 iterations). Variants read, read_cg.
// bytes_moved counts the bytes the kernel's loads and stores ask for (copy: both).
//
//   bw_inflight dram|l2 RUNS.csv      (QUICK=1: a few points)
#include <string>
#include "micro.cuh"

template <int U, int V>  // V: 0 read, 1 read_cg, 2 write, 3 copy
__global__ void bw_kernel(const double* __restrict__ a, double* __restrict__ b, long mask, int iters, int* smids) {
  const long T = (long)gridDim.x * blockDim.x;
  const long g = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) smids[blockIdx.x] = (int)smid();
  double acc = 0.0;
#pragma unroll 1
  for (int it = 0; it < iters; it++) {
    const long base = (long)it * U * T + g;
    double v[U];
    if (V == 2) {
#pragma unroll
      for (int j = 0; j < U; j++) { long idx = (base + j * T) & mask; b[idx] = (double)(idx & 1023) + 0.5; }
    } else {
#pragma unroll
      for (int j = 0; j < U; j++) { long idx = (base + j * T) & mask; v[j] = V == 1 ? __ldcg(a + idx) : a[idx]; }
      if (V == 3) {
#pragma unroll
        for (int j = 0; j < U; j++) { long idx = (base + j * T) & mask; b[idx] = v[j]; }
      } else {
#pragma unroll
        for (int j = 0; j < U; j++) acc += v[j];
      }
    }
  }
  if (V < 2 && acc == -1.0) b[g] = acc;
}

__global__ void fill_k(double* a, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) a[i] = 1.0 + (double)(i % 1000) * 1e-3;
}
__global__ void l2warm(const double* __restrict__ a, long n, double* sink) {
  double s = 0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) s += a[i];
  if (s == -1.0) sink[0] = s;
}

typedef void (*KFn)(const double*, double*, long, int, int*);
template <int V> static KFn pick(int U) {
  switch (U) { case 1: return bw_kernel<1, V>; case 2: return bw_kernel<2, V>; case 4: return bw_kernel<4, V>; default: return bw_kernel<8, V>; }
}
static KFn kernel_for(const std::string& v, int U) {
  if (v == "read") return pick<0>(U);
  if (v == "read_cg") return pick<1>(U);
  if (v == "write") return pick<2>(U);
  return pick<3>(U);
}

struct Pt { std::string variant; int warps, block, per_sm, U; };

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s dram|l2 RUNS.csv\n", argv[0]); return 2; }
  std::string level = argv[1];
  FILE* f = fopen(argv[2], "w");
  if (!f) { perror(argv[2]); return 2; }
  print_device(stdout);
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  const int nsm = pr.multiProcessorCount;
  const long big = quick() ? (256l << 20) : (2l << 30);  // bytes per buffer
  const long l2bytes = 16l << 20;
  double *a, *b;
  CK(cudaMalloc(&a, big)); CK(cudaMalloc(&b, big));
  fill_k<<<4096, 256>>>(a, big / 8); fill_k<<<4096, 256>>>(b, big / 8);
  int* d_smids; CK(cudaMalloc(&d_smids, 64 * nsm * 4));
  CK(cudaDeviceSynchronize());

  const int warps[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
  const int Us[] = {1, 2, 4, 8};
  std::vector<Pt> pts;
  auto shape = [](int w) { int g = 1; for (int d = 1; d <= 8; d++) if (w % d == 0) g = d; return g; };
  std::vector<std::string> variants = level == "dram" ? std::vector<std::string>{"read"} : std::vector<std::string>{"read", "read_cg"};
  for (auto& v : variants)
    for (int w : warps)
      for (int U : Us) pts.push_back({v, w, 32 * shape(w), w / shape(w), U});
  if (level == "dram") {
    for (int w : warps) pts.push_back({"read_cg", w, 32 * shape(w), w / shape(w), 4});
    for (const char* v : {"write", "copy"})
      for (int w : {2, 4, 8, 16, 32, 64})
        for (int U : {1, 4}) pts.push_back({v, w, 32 * shape(w), w / shape(w), U});
  }
  // the same warps per SM from other block sizes
  for (int U : {1, 4}) {
    pts.push_back({"read", 8, 32, 8, U});
    pts.push_back({"read", 32, 32, 32, U});
    pts.push_back({"read", 32, 1024, 1, U});
    pts.push_back({"read", 64, 1024, 2, U});
  }
  if (quick()) pts = {{"read", 1, 32, 1, 1}, {"read", 64, 256, 8, 8}, {"read_cg", 8, 256, 1, 4}, {"copy", 16, 256, 2, 4}};

  fprintf(f, "kernel,level,variant,warps_per_sm,block_threads,blocks_per_sm,loads_in_flight_per_thread,bytes_per_load,"
             "bytes_in_flight_per_sm,threads,iters,bytes_moved,min_blocks_per_sm,max_blocks_per_sm,sms_used\n");
  for (auto& p : pts) {
    if (level == "l2" && (p.variant == "write" || p.variant == "copy")) continue;
    const long T = (long)p.block * p.per_sm * nsm;
    long iters, mask;
    if (level == "l2") {
      mask = l2bytes / 8 - 1;
      iters = std::max(4l, (long)((20 * l2bytes) / (T * p.U * 8)));
    } else {
      mask = big / 8 - 1;  // big is a power of two; indices stay below it
      long cap = (p.variant == "write" || p.variant == "copy") ? 2048 : 512;
      long lim = (p.variant == "write" || p.variant == "copy") ? (1l << 30) : big;
      iters = std::min(cap, lim / (T * p.U * 8));
      if (iters < 1) iters = 1;
    }
    if (level == "l2") {
      l2warm<<<4 * nsm, 512>>>(a, l2bytes / 8, b);
      CK(cudaGetLastError());
    }
    KFn k = kernel_for(p.variant, p.U);
    CK(cudaMemset(d_smids, 0xff, 64 * nsm * 4));
    k<<<p.per_sm * nsm, p.block>>>(a, b, mask, (int)iters, d_smids);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<int> sm(p.per_sm * nsm);
    CK(cudaMemcpy(sm.data(), d_smids, sm.size() * 4, cudaMemcpyDeviceToHost));
    std::vector<int> cnt(1024, 0);
    for (int s : sm) if (s >= 0 && s < 1024) cnt[s]++;
    int mn = 1 << 30, mx = 0, used = 0;
    for (int s = 0; s < nsm; s++) { mn = std::min(mn, cnt[s]); mx = std::max(mx, cnt[s]); }
    for (int s = 0; s < 1024; s++) used += cnt[s] > 0;
    long bytes = T * p.U * iters * 8 * (p.variant == "copy" ? 2 : 1);
    fprintf(f, "bw_kernel,%s,%s,%d,%d,%d,%d,8,%d,%ld,%ld,%ld,%d,%d,%d\n", level.c_str(), p.variant.c_str(), p.block * p.per_sm / 32,
            p.block, p.per_sm, p.U, p.block * p.per_sm * p.U * 8, T, iters, bytes, mn, mx, used);
    fflush(f);
  }
  fclose(f);
  printf("bw_inflight %s: %zu points\n", level.c_str(), pts.size());
  return 0;
}
