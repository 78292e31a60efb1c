// L2 near versus far partition: per-load latencies of one thread on a chosen SM.
// A chain of 2048 lines, each in its own 4 KiB page of a 16 MiB region (a random line of a random
// page, visited in random order), is chased with ld.global.cg (L2 only, no L1) by one thread on SM
// `meas_sm`, three passes, and every load is timed on its own with clock64 (clock; load; a volatile
// shared store of the loaded value, which issues only once it has arrived; clock). Since the L2
// home partition of a line follows from address bits 12 and up, the 2048 pages spread over both
// partitions, and the per-load latencies of an L2-resident pass should fall into two groups.
// Before the passes, another SM (`warm_sm`) may chase the same chain once, so that the lines sit in
// L2 as that SM left them; warm_sm = -1: nobody warms, pass 0 then reads DRAM (ncu flushes the
// caches before each launch). Same chain (same lines, same order) in every configuration, so line
// homes can be compared across SMs. Configuration `l1_base`: 64 lines of one 8 KiB region with
// plain (L1-cached) loads, so that passes 1-2 hit L1: the per-load timing overhead of this method
// (this kernel's 40 KiB of shared memory per block leaves the L1 small: 256 lines hit only in part).
// The grid has 4 one-warp blocks per SM; the first block found on an SM takes that SM's role
// (claimed with atomicCAS); the measurer waits (at most ~2e9 cycles) for the warmer's flag.
//
//   l2_near_far RUNS.csv LOADS.csv     (QUICK=1: two configurations)
// RUNS.csv: one row per launch; LOADS.csv: config,meas_sm,warm_sm,pass,step,line_offset_bytes,cycles.
//
//   l2_near_far --map MAP.csv          (run without ncu; QUICK=1: 8 warmers)
// Partition map: for a reference SM r (0, and SMs/2 - 2) and every other SM w, w warms the chain and
// r chases it three times. A line is "far" in pass 0 when its latency exceeds that of the same line
// in pass 1 (by then r's own partition holds it) by more than 70 cycles. w in r's partition leaves
// every line near; w in the other partition leaves the lines homed there far (about half). A kernel
// writing 192 MiB runs before each launch to flush L2 (no ncu here, so clocks are not locked:
// cycles are SM cycles at whatever clock the card runs).
//
//   l2_near_far --stores LINES.csv     (run without ncu)
// Where stores leave a line. After a flush that reads 192 MiB (every set clean), one-warp kernels
// on chosen SMs read the chain (lane 0 chases it) or write it (lanes 0-3 rewrite sector 0 of each
// line with the values it holds: a whole-sector store, the data unchanged; or lane 0 its first
// word only: 8 of 32 bytes), in the configuration's order; then SM 0 chases the chain three times
// as above. A line SM 0 finds in its own partition in pass 0 takes about as long as in pass 1; one
// it finds only in the far partition 140-200 cycles more; one that was in neither, a DRAM miss
// (225 or more). validation/l2_stores_summary.py counts them per configuration and home. SM 1 shares SM 0's TPC and so its side; the other side's SM is the first of a list
// of candidates whose read leaves 30-70% of the lines far.
// Questions: does a store from SM 0's side to a line homed on the other side leave a copy in SM 0's
// partition (the configs say no: it goes home and invalidates the near copy), and does a store from
// the other side invalidate the copy a read left in SM 0's partition?
#include <algorithm>
#include <string>
#include "micro.cuh"

#define NMAX 2048
#define PASSES 3

template <bool CA>
__global__ void nf_chase(const unsigned long long* base, const unsigned long long* start, int n, int meas_sm, int warm_sm,
                         int* claim, int* flag, unsigned* out_lat, unsigned* out_off, long long* info) {
  if (threadIdx.x != 0) return;
  __shared__ unsigned s_lat[PASSES * NMAX];
  __shared__ unsigned s_off[NMAX];
  volatile __shared__ unsigned s_dep[NMAX];
  unsigned sm = smid();
  int role = 0;
  if (warm_sm >= 0 && (int)sm == warm_sm && atomicCAS(&claim[1], 0, 1) == 0) role = 2;
  else if ((int)sm == meas_sm && atomicCAS(&claim[0], 0, 1) == 0) role = 1;
  if (role == 0) return;
  const unsigned long long* p = start;
  if (role == 2) {
    for (int i = 0; i < n; i++) p = ld_cg(p);
    s_dep[0] = (unsigned)(unsigned long long)p;
    __threadfence();
    atomicExch(flag, 1);
    info[4] = sm;
    return;
  }
  long long waited = 0;
  if (warm_sm >= 0) {
    long long t = clk();
    while (atomicAdd(flag, 0) == 0 && (waited = clk() - t) < 2000000000ll) {}
    if (atomicAdd(flag, 0) == 0) waited = -1;  // timed out: warmer never ran
  }
  long long tt0 = clk();
  for (int pass = 0; pass < PASSES; pass++) {
    for (int i = 0; i < n; i++) {
      if (pass == 0) s_off[i] = (unsigned)((const char*)p - (const char*)base);
      long long t0 = clk();
      const unsigned long long* q = CA ? ld_ca(p) : ld_cg(p);
      s_dep[i] = (unsigned)(unsigned long long)q;
      long long t1 = clk();
      s_lat[pass * NMAX + i] = (unsigned)(t1 - t0);
      p = q;
    }
  }
  long long tt1 = clk();
  for (int i = 0; i < PASSES * n; i++) out_lat[i] = s_lat[(i / n) * NMAX + i % n];
  for (int i = 0; i < n; i++) out_off[i] = s_off[i];
  info[0] = 1; info[1] = sm; info[2] = waited; info[3] = tt1 - tt0; info[5] = (long long)p;
}

struct Cfg { const char* name; int meas, warm; bool ca; };

__global__ void flush_k(double* f, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) f[i] = (double)i;
}

// The L2 chain every mode chases: 2048 distinct pages of the 4096 in 16 MiB, a random line of
// each, in random order. The first draws of `rng` (seeded 777), so every mode chases the same lines.
static std::vector<uint64_t> l2_chain_offsets(Rng& rng, size_t region) {
  std::vector<uint64_t> pages = random_perm(region / 4096, rng);
  std::vector<uint64_t> offs(NMAX);
  for (int i = 0; i < NMAX; i++) offs[i] = pages[i] * 4096 + rng.below(32) * 128;
  return offs;
}

// The device side of one measured chase: nf_chase's claim and flag words, its latencies, offsets
// and info, and the launch that fills them (4 one-warp blocks per SM).
struct Chaser {
  int *claim, *flag;
  unsigned *d_lat, *d_off;
  long long* d_info;
  Chaser() {
    CK(cudaMalloc(&claim, 8)); CK(cudaMalloc(&flag, 4));
    CK(cudaMalloc(&d_lat, PASSES * NMAX * 4)); CK(cudaMalloc(&d_off, NMAX * 4));
    CK(cudaMalloc(&d_info, 8 * 8));
  }
  // Chases n lines from `start`: `meas` measures, `warm` (-1: nobody) warms first. Fills info[8],
  // lat (PASSES * n, pass by pass) and, if given, off (n).
  void run(bool ca, const unsigned long long* base, const unsigned long long* start, int n, int meas, int warm, int nsm,
           long long* info, std::vector<unsigned>& lat, std::vector<unsigned>* off) {
    CK(cudaMemset(claim, 0, 8)); CK(cudaMemset(flag, 0, 4)); CK(cudaMemset(d_info, 0, 64));
    if (ca) nf_chase<true><<<4 * nsm, 32>>>(base, start, n, meas, warm, claim, flag, d_lat, d_off, d_info);
    else nf_chase<false><<<4 * nsm, 32>>>(base, start, n, meas, warm, claim, flag, d_lat, d_off, d_info);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(info, d_info, 64, cudaMemcpyDeviceToHost));
    lat.resize(PASSES * n);
    CK(cudaMemcpy(lat.data(), d_lat, PASSES * n * 4, cudaMemcpyDeviceToHost));
    if (off) {
      off->resize(n);
      CK(cudaMemcpy(off->data(), d_off, n * 4, cudaMemcpyDeviceToHost));
    }
  }
};

// What --map and --stores share: the SM count, the default mode's 2048-line chain in a 16 MiB
// region, a 192 MiB flush buffer and the chaser.
struct ChainRig {
  int nsm;
  const long nflush = (192l << 20) / 8;
  unsigned long long* buf;
  double* fl;
  std::vector<uint64_t> offs;
  const unsigned long long* start;
  Chaser chaser;
  ChainRig() {
    cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
    nsm = pr.multiProcessorCount;
    const size_t region = 16u << 20;
    CK(cudaMalloc(&buf, region));
    CK(cudaMemset(buf, 0, region));
    CK(cudaMalloc(&fl, nflush * 8));
    Rng rng(777);  // the same chain as the default mode's
    offs = l2_chain_offsets(rng, region);
    start = build_chain(buf, offs);
  }
};

static int partition_map(const char* path);
static int stores(const char* path);

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--map") return partition_map(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--stores") return stores(argv[2]);
  if (argc < 3) { fprintf(stderr, "usage: %s RUNS.csv LOADS.csv | --map MAP.csv\n", argv[0]); return 2; }
  FILE* fr = fopen(argv[1], "w");
  FILE* fl = fopen(argv[2], "w");
  if (!fr || !fl) { perror("output"); return 2; }
  print_device(stdout);
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  int nsm = pr.multiProcessorCount, last = nsm - 1, half = nsm / 2;
  const size_t region = 16u << 20;
  unsigned long long* buf; CK(cudaMalloc(&buf, region + (32u << 10)));
  CK(cudaMemset(buf, 0, region + (32u << 10)));
  Chaser chaser;

  Rng rng(777);
  std::vector<uint64_t> offs = l2_chain_offsets(rng, region);
  // the L1 chain: all 64 lines of an 8 KiB region in random order (offsets relative to buf)
  std::vector<uint64_t> l1lines = random_perm(64, rng);
  std::vector<uint64_t> offs1(64);
  for (int i = 0; i < 64; i++) offs1[i] = region + l1lines[i] * 128;

  std::vector<Cfg> cfgs = {
    {"l1_base", 0, -1, true},
    {"m0_cold", 0, -1, false},
    {"m0_w131", 0, last, false},
    {"m0_w64", 0, half - 2, false},
    {"m0_w63", 0, half - 3, false},
    {"m0_w1", 0, 1, false},
    {"m131_cold", last, -1, false},
    {"m131_w0", last, 0, false},
    {"m66_cold", half, -1, false},
    {"m66_w0", half, 0, false},
  };
  if (quick()) cfgs = {cfgs[0], cfgs[2]};
  fprintf(fr, "kernel,config,meas_sm,warm_sm,load,lines,passes,measured_on_sm,wait_cycles,total_cycles\n");
  fprintf(fl, "config,meas_sm,warm_sm,pass,step,line_offset_bytes,cycles\n");
  for (auto& c : cfgs) {
    int n = c.ca ? 64 : NMAX;
    const unsigned long long* start = build_chain(buf, c.ca ? offs1 : offs);
    long long info[8];
    std::vector<unsigned> lat, off;
    chaser.run(c.ca, buf, start, n, c.meas, c.warm, nsm, info, lat, &off);
    fprintf(fr, "nf_chase,%s,%d,%d,%s,%d,%d,%lld,%lld,%lld\n", c.name, c.meas, c.warm, c.ca ? "ca" : "cg", n, PASSES,
            info[0] ? info[1] : -1ll, info[2], info[3]);
    if (info[0])
      for (int ps = 0; ps < PASSES; ps++)
        for (int i = 0; i < n; i++) fprintf(fl, "%s,%d,%d,%d,%d,%u,%u\n", c.name, c.meas, c.warm, ps, i, off[i], lat[ps * n + i]);
    // a one-line summary: median of each pass
    printf("%-10s meas=%3d warm=%4d on_sm=%lld wait=%lld:", c.name, c.meas, c.warm, info[0] ? info[1] : -1ll, info[2]);
    for (int ps = 0; ps < PASSES; ps++) {
      std::vector<unsigned> v(lat.begin() + ps * n, lat.begin() + (ps + 1) * n);
      std::nth_element(v.begin(), v.begin() + n / 2, v.end());
      printf(" pass%d median %u", ps, v[n / 2]);
    }
    printf("\n");
  }
  fclose(fr); fclose(fl);
  return 0;
}

static int partition_map(const char* path) {
  FILE* f = fopen(path, "w");
  if (!f) { perror(path); return 2; }
  print_device(stdout);
  ChainRig rig;
  const int nsm = rig.nsm;
  fprintf(f, "ref_sm,warm_sm,measured_on_sm,lines,far_lines,far_fraction,median_pass0_cycles,median_pass0_far_cycles,median_pass0_near_cycles,median_pass1_cycles\n");
  int n = NMAX;
  for (int ref : {0, nsm / 2 - 2}) {
    for (int w = 0; w < nsm; w++) {
      if (w == ref) continue;
      if (quick() && w % 17) continue;
      flush_k<<<4 * nsm, 512>>>(rig.fl, rig.nflush);
      long long info[8];
      std::vector<unsigned> lat;
      rig.chaser.run(false, rig.buf, rig.start, n, ref, w, nsm, info, lat, nullptr);
      std::vector<unsigned> p0, p1, far, near;
      for (int i = 0; i < n; i++) {
        p0.push_back(lat[i]); p1.push_back(lat[n + i]);
        (lat[i] > lat[n + i] + 70 ? far : near).push_back(lat[i]);
      }
      auto med = [](std::vector<unsigned> v) -> long { if (v.empty()) return -1; std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end()); return v[v.size() / 2]; };
      bool ok = info[0] && info[2] >= 0;
      fprintf(f, "%d,%d,%lld,%d,%zu,%.4f,%ld,%ld,%ld,%ld\n", ref, w, ok ? info[1] : -1ll, n, far.size(), ok ? (double)far.size() / n : -1.0,
              med(p0), med(far), med(near), med(p1));
      fflush(f);
    }
  }
  fclose(f);
  printf("partition map written to %s\n", path);
  return 0;
}

// Reads n doubles (a flush that leaves every L2 set full of clean lines).
__global__ void flush_read_k(const double* f, long n, double* sink) {
  double acc = 0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) acc += f[i];
  if (acc == -1.0) *sink = acc;
}

// One warp on SM `sm` (the first block there claims it) reads (op 0: lane 0 chases from `start`)
// or writes the chain: op 1, lanes 0-3 store sector 0 of every line with the words it holds (a
// whole sector); op 2, lane 0 stores its first word only (8 of the sector's 32 bytes).
__global__ void nf_setup(unsigned long long* base, const unsigned long long* offs, int n, int sm, int op, int* claim,
                         const unsigned long long* start, long long* sink) {
  int lane = threadIdx.x;
  int mine = lane == 0 && (int)smid() == sm && atomicCAS(claim, 0, 1) == 0;
  if (!__shfl_sync(0xffffffffu, mine, 0)) return;
  if (op == 0) {
    if (lane != 0) return;
    const unsigned long long* p = start;
    for (int i = 0; i < n; i++) p = ld_cg(p);
    sink[0] = (long long)p;
  } else if (lane < (op == 1 ? 4 : 1)) {
    for (int i = 0; i < n; i++) {
      int j = i + 1 == n ? 0 : i + 1;
      unsigned long long v = lane == 0 ? (unsigned long long)base + offs[j] : 0ull;
      unsigned long long* q = base + offs[i] / 8 + lane;
      asm volatile("st.global.u64 [%0], %1;" ::"l"(q), "l"(v) : "memory");
    }
  }
  __threadfence();
}

static int stores(const char* path) {
  FILE* f = fopen(path, "w");
  if (!f) { perror(path); return 2; }
  print_device(stdout);
  ChainRig rig;
  const int nsm = rig.nsm;
  CK(cudaMemset(rig.fl, 0, rig.nflush * 8));
  long long* d_sink; CK(cudaMalloc(&d_sink, 64));
  unsigned long long* d_offs; CK(cudaMalloc(&d_offs, NMAX * 8));
  CK(cudaMemcpy(d_offs, rig.offs.data(), NMAX * 8, cudaMemcpyHostToDevice));
  const int n = NMAX, meas = 0, same = 1;
  // Runs the steps (op, sm) after a reading flush, then SM 0's three passes; returns the latencies.
  auto run = [&](const std::vector<std::pair<int, int>>& steps, std::vector<unsigned>& lat, std::vector<unsigned>& off) {
    flush_read_k<<<4 * nsm, 512>>>(rig.fl, rig.nflush, (double*)d_sink);
    CK(cudaGetLastError());
    for (auto [op, sm] : steps) {
      CK(cudaMemset(rig.chaser.claim, 0, 8));
      nf_setup<<<4 * nsm, 32>>>(rig.buf, d_offs, n, sm, op, rig.chaser.claim, rig.start, d_sink);
      CK(cudaGetLastError());
    }
    long long info[8];
    rig.chaser.run(false, rig.buf, rig.start, n, meas, -1, nsm, info, lat, &off);
    return info[0] != 0;
  };
  auto far_share = [&](const std::vector<unsigned>& lat) {
    int far = 0;
    for (int i = 0; i < n; i++) far += lat[i] > lat[n + i] + 70;
    return (double)far / n;
  };
  std::vector<unsigned> lat, off;
  int other = -1;
  for (int cand : {nsm / 2 - 2, nsm / 2, nsm / 2 - 1, 2, 8, 24, 56, nsm - 1, nsm - 9}) {
    if (cand == meas || cand == same || cand < 0 || cand >= nsm) continue;
    if (!run({{0, cand}}, lat, off)) continue;
    double fs = far_share(lat);
    printf("candidate other-side SM %d: its read leaves %.3f of the lines far\n", cand, fs);
    if (fs > 0.3 && fs < 0.7) { other = cand; break; }
  }
  if (other < 0) { fprintf(stderr, "no SM of the other side found\n"); return 1; }
  struct SCfg { const char* name; std::vector<std::pair<int, int>> steps; };
  const int R = 0, W = 1, P = 2;
  std::vector<SCfg> cfgs = {
    {"cold", {}},
    {"rd_self", {{R, meas}}},
    {"rd_other", {{R, other}}},
    {"wr_self", {{W, meas}}},
    {"wr_same", {{W, same}}},
    {"wr_other", {{W, other}}},
    {"rd_self_wr_self", {{R, meas}, {W, meas}}},
    {"rd_self_wr_other", {{R, meas}, {W, other}}},
    {"rd_other_wr_self", {{R, other}, {W, meas}}},
    {"wr_self_rd_other", {{W, meas}, {R, other}}},
    {"wr_self_wr_other", {{W, meas}, {W, other}}},
    {"part_self", {{P, meas}}},
    {"rd_self_part_self", {{R, meas}, {P, meas}}},
    {"rd_self_part_other", {{R, meas}, {P, other}}},
  };
  fprintf(f, "config,rep,meas_sm,same_sm,other_sm,step,line_offset_bytes,pass0_cycles,pass1_cycles,pass2_cycles\n");
  for (int rep = 0; rep < 2; rep++) {
    for (auto& c : cfgs) {
      if (!run(c.steps, lat, off)) { fprintf(stderr, "%s: SM %d ran no block\n", c.name, meas); return 1; }
      // Beyond pass 1's near hit: far hits take +140..+200 cycles, DRAM misses +225 or more
      // (about +255..+290 through the near home, +440..+475 through the far one).
      int near = 0, far = 0, dram = 0;
      for (int i = 0; i < n; i++) {
        unsigned a = lat[i], b = lat[n + i];
        if (a <= b + 70) near++; else if (a <= b + 215) far++; else dram++;
        fprintf(f, "%s,%d,%d,%d,%d,%d,%u,%u,%u,%u\n", c.name, rep, meas, same, other, i, off[i], a, b, lat[2 * n + i]);
      }
      printf("%-18s rep %d: near %4d far %4d dram %4d (of %d; pass1 median ", c.name, rep, near, far, dram, n);
      std::vector<unsigned> p1(lat.begin() + n, lat.begin() + 2 * n);
      std::nth_element(p1.begin(), p1.begin() + n / 2, p1.end());
      printf("%u)\n", p1[n / 2]);
    }
  }
  fclose(f);
  printf("store placement written to %s\n", path);
  return 0;
}
