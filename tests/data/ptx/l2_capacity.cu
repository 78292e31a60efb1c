// The L2 at its capacity edge, the whole GPU streaming: how much of an array that every SM sweeps
// in turn the L2 keeps from one pass to the next, as the array grows past the L2's size.
//
// l2cap_sweep: 2 blocks of 1024 threads per SM (one full wave), each thread loads 8-byte words
// with a grid stride over an array of m * (grid * 1024) words, `passes` times. In pass p, block b
// walks the grid-stride column of block (b + p * rot) % grid, so no SM re-reads in pass p + 1 what
// it read in pass p (its L1 cannot serve it) and the L2 serves every re-read it kept:
//   DRAM sectors read = footprint / 32 (pass 0, cold after ncu's flush) + misses of passes 1..
// `rot` picks who re-reads a line: rot = 1, the block next in dispatch order (the other SM of the
// same TPC: the same L2 partition); rot = 8 and 66, blocks placed on other GPCs (often the other
// partition, which holds its own copy of the lines it reads). The kernel is `traces/l2-sweep.toml`;
// tests/l2_capacity.rs replays these runs through the configs.
//
//   l2_capacity RUNS.csv BLOCKS.csv     (QUICK=1: a few runs)
// RUNS.csv: one row per launch; BLOCKS.csv: the SM every block of every launch ran on.
//
//   l2_capacity timed RUNS.csv STAMPS.csv   (validation/l2_capacity_skew.sh runs it under ncu)
// The same sweep at the capacity edge (rot 1 and 8, m = 16, 20, 24), as l2cap_timed: lane 0 of every
// warp reads %globaltimer before each pass and after the last, so the stamps show how far the warps
// of the wave drift apart from pass to pass (a warp a pass ahead re-reads lines another has just
// brought in). STAMPS.csv: launch, warp (block * 32 + warp), sm, then the stamps in ns from the
// launch's first.
#include <string>
#include <cstring>
#include "micro.cuh"

__global__ void l2cap_sweep(const double* a, double* sink, long m, int passes, int rot, unsigned* block_sm) {
  const long stride = (long)gridDim.x * blockDim.x;
  double acc = 0;
  for (int p = 0; p < passes; p++) {
    const long b = (blockIdx.x + (long)p * rot) % gridDim.x;
    const double* q = a + b * blockDim.x + threadIdx.x;
    for (long k = 0; k < m; k++) acc += q[k * stride];
  }
  sink[blockIdx.x * (long)blockDim.x + threadIdx.x] = acc;
  if (threadIdx.x == 0) block_sm[blockIdx.x] = smid();
}

// l2cap_sweep with a %globaltimer stamp per warp at every pass boundary (outside the load loop).
__global__ void l2cap_timed(const double* a, double* sink, long m, int passes, int rot, unsigned* block_sm,
                            unsigned long long* stamps) {
  const long stride = (long)gridDim.x * blockDim.x;
  const long warp = ((long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const bool lead = (threadIdx.x & 31) == 0;
  double acc = 0;
  for (int p = 0; p < passes; p++) {
    if (lead) stamps[warp * (passes + 1) + p] = gtime();
    const long b = (blockIdx.x + (long)p * rot) % gridDim.x;
    const double* q = a + b * blockDim.x + threadIdx.x;
    for (long k = 0; k < m; k++) acc += q[k * stride];
  }
  sink[blockIdx.x * (long)blockDim.x + threadIdx.x] = acc;
  if (lead) stamps[warp * (passes + 1) + passes] = gtime();
  if (threadIdx.x == 0) block_sm[blockIdx.x] = smid();
}

static int timed(const char* runs_path, const char* stamps_path) {
  FILE* f = fopen(runs_path, "w");
  FILE* fs = fopen(stamps_path, "w");
  if (!f || !fs) { perror("output"); return 2; }
  print_device(stdout);
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  const int threads = 1024, blocks = 2 * pr.multiProcessorCount, passes = 4;
  const long stride = (long)blocks * threads, warps = stride / 32;
  const long ms[] = {16, 20, 24};
  const int rots[] = {1, 8};
  double* a; CK(cudaMalloc(&a, 24 * stride * 8));
  CK(cudaMemset(a, 0, 24 * stride * 8));
  double* sink; CK(cudaMalloc(&sink, stride * 8));
  unsigned* d_sm; CK(cudaMalloc(&d_sm, blocks * 4));
  unsigned long long* d_st; CK(cudaMalloc(&d_st, warps * (passes + 1) * 8));
  std::vector<unsigned> h_sm(blocks);
  std::vector<unsigned long long> h_st(warps * (passes + 1));
  fprintf(f, "kernel,rot,m,passes,blocks,threads,words,footprint_bytes,sectors_per_pass\n");
  fprintf(fs, "launch,warp,sm,t0,t1,t2,t3,t4\n");
  int launch = 0;
  for (int rot : rots)
    for (long m : ms) {
      l2cap_timed<<<blocks, threads>>>(a, sink, m, passes, rot, d_sm, d_st);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h_sm.data(), d_sm, blocks * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(h_st.data(), d_st, h_st.size() * 8, cudaMemcpyDeviceToHost));
      const long words = m * stride;
      fprintf(f, "l2cap_timed,%d,%ld,%d,%d,%d,%ld,%ld,%ld\n", rot, m, passes, blocks, threads, words, words * 8, words * 8 / 32);
      unsigned long long t0 = ~0ull;
      for (unsigned long long t : h_st) t0 = std::min(t0, t);
      for (long w = 0; w < warps; w++) {
        fprintf(fs, "%d,%ld,%u", launch, w, h_sm[w / 32]);
        for (int p = 0; p <= passes; p++) fprintf(fs, ",%llu", h_st[w * (passes + 1) + p] - t0);
        fprintf(fs, "\n");
      }
      launch++;
    }
  fclose(f);
  fclose(fs);
  printf("l2_capacity timed: %d runs\n", launch);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && !strcmp(argv[1], "timed")) return timed(argv[2], argv[3]);
  if (argc < 3) { fprintf(stderr, "usage: %s RUNS.csv BLOCKS.csv\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "w");
  FILE* fb = fopen(argv[2], "w");
  if (!f || !fb) { perror("output"); return 2; }
  print_device(stdout);
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  const int threads = 1024, blocks = 2 * pr.multiProcessorCount, passes = 4;
  const long stride = (long)blocks * threads;
  std::vector<long> ms;
  for (long m = 2; m <= 40; m += 2) ms.push_back(m);
  for (long m : {44, 48, 56, 64, 80}) ms.push_back(m);
  std::vector<int> rots = {1, 8, 66};
  if (quick()) { ms = {4, 24}; rots = {1}; }
  // M_LIST / ROTS (space-separated) pick the runs; PAD_MB allocates that much first, so that the
  // array gets other physical pages (validation/placement_spread.sh).
  if (const char* e = getenv("M_LIST")) { ms.clear(); for (char* t = strtok(strdup(e), " "); t; t = strtok(nullptr, " ")) ms.push_back(atol(t)); }
  if (const char* e = getenv("ROTS")) { rots.clear(); for (char* t = strtok(strdup(e), " "); t; t = strtok(nullptr, " ")) rots.push_back(atoi(t)); }
  if (const char* e = getenv("PAD_MB")) { void* p = nullptr; if (atol(e) > 0) CK(cudaMalloc(&p, (size_t)atol(e) << 20)); printf("# pad=%s MiB\n", e); }
  const long maxm = *std::max_element(ms.begin(), ms.end());
  double* a; CK(cudaMalloc(&a, maxm * stride * 8));
  CK(cudaMemset(a, 0, maxm * stride * 8));
  double* sink; CK(cudaMalloc(&sink, stride * 8));
  unsigned* d_sm; CK(cudaMalloc(&d_sm, blocks * 4));
  std::vector<unsigned> h_sm(blocks);
  fprintf(f, "kernel,rot,m,passes,blocks,threads,words,footprint_bytes,sectors_per_pass\n");
  fprintf(fb, "launch,rot,m,block,sm\n");
  int launch = 0;
  for (int rot : rots)
    for (long m : ms) {
      l2cap_sweep<<<blocks, threads>>>(a, sink, m, passes, rot, d_sm);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h_sm.data(), d_sm, blocks * 4, cudaMemcpyDeviceToHost));
      const long words = m * stride;
      fprintf(f, "l2cap_sweep,%d,%ld,%d,%d,%d,%ld,%ld,%ld\n", rot, m, passes, blocks, threads, words, words * 8, words * 8 / 32);
      for (int b = 0; b < blocks; b++) fprintf(fb, "%d,%d,%ld,%d,%u\n", launch, rot, m, b, h_sm[b]);
      fflush(f);
      launch++;
    }
  fclose(f);
  fclose(fb);
  printf("l2_capacity: %d runs\n", launch);
  return 0;
}
