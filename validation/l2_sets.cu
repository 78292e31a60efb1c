// What one side of the split L2 keeps, and the search for its eviction sets (run without ncu).
//
//   l2_sets OUTDIR curve [TARGETS [HOME_MASK]]   eviction curves of one SM (default 4 targets)
//   l2_sets OUTDIR cross [TARGETS]               the pool read by other SMs
//   l2_sets OUTDIR evset [TARGETS]               minimal eviction sets, then replacement sequences
//   l2_sets OUTDIR reuse [TARGETS]               does a hit protect a line? (T read 1, 2 or 4 times)
//   l2_sets OUTDIR reduce [TARGETS [POOL [FLUSH [dirty|scan [PAGES]]]]]  minimal eviction sets by group elimination
//   l2_sets OUTDIR order [TARGETS]               the same pool read in parallel or in a fixed order
//   l2_sets OUTDIR clean [TARGETS]               the curve after a flush that writes or only reads
//   l2_sets OUTDIR dirtvol [TARGETS]             how much dirt, and how long ago, shrinks one side's share
//
// A test: write 192 MiB from the whole GPU (flushes the L2 of our lines); thread 0 of one block of
// 1024 threads reads a sequence of lines one after the other (each load's address depends on the
// previous load's value, so they reach the L2 in order); all 1024 threads read a pool of lines (any
// order); thread 0 waits 20000 cycles (write-backs drain) and times one load of a probe line with
// clock64. All loads are ld.global.cg (L2 only), so every line read sits in that SM's near
// partition (lines homed in the far one are duplicated there). The probe "was evicted" when it
// takes more than 70 cycles over a hit: a near-homed line then comes from DRAM, a far-homed one
// from the far partition.
//
// curve: a target T, then pools of N = 4096 .. 2^20 random lines of a 1 GiB buffer (two sizes an
//   octave, 4 pools each, 2 repeats): does the pool evict T? Also the hit, flush and cold
//   latencies of 32 lines; with HOME_MASK (the config's within-page home bits, hex), each 2 MiB
//   page's side from its cold latency, and pools of only near-homed or only far-homed lines.
//   -> l2_sets_curve.csv (kind, target, pool_lines, pool_seed, rep, cycles, sm)
// cross: T read and timed by a block on SM 0, the pool (8 .. 64 MiB) read by a block on another SM
//   of either side (264 resident blocks; the first block on each SM takes its role).
//   -> l2_sets_cross.csv (sm_a, sm_b, target, pool_lines, pool_seed, rep, cycles)
// evset: prefix search. With the lines found so far F, the shortest prefix of the rest of a pool
//   of 2^20 lines that with F evicts T ends in a line of T's set; keep it and the prefix before it,
//   repeat until F alone evicts T (each answer 2 of 3 tests). Under LRU, FIFO or tree-PLRU the
//   result holds as many lines as a set has ways; it is verified (evicts T 5 of 5 times, and
//   without any one of its lines in none of 3). Then up to 8 more lines of the set, and serial
//   replacement sequences over them, each line probed in a trial of its own.
//   -> l2_sets_trace.csv (the search step by step), l2_sets_lines.csv, l2_sets_summary.csv,
//      l2_sets_policy.csv
// reuse: as curve, but T is read 1, 2 or 4 times in a row before the pool (the reads after the
//   first hit). Under LRU or tree-PLRU the pool evicts T alike whatever the count; a policy that
//   promotes lines on a hit (RRIP, LFU-like) lets a reused T outlive more of the pool.
//   -> l2_sets_reuse.csv (target, reads, pool_lines, pool_seed, rep, cycles, sm)
// reduce: group elimination (Vila et al., S&P 2019), robust to a noisy test. From a pool of POOL
//   random lines (default 2^18, which evicts T in every trial of `curve`), split the set into 32
//   groups and drop the first group (in random order) whose removal still evicts T in 3 of 3
//   trials; repeat. Below 64 lines go line by line. Under any policy that evicts by sets of W < 32
//   ways this ends in W lines, each needed; a set that cannot shrink below 32 groups' worth means
//   the eviction is not decided by a set of fewer than 32 lines. Verified as in evset. FLUSH =
//   `write` (default) or `read`: the flush that leaves the sets dirty or clean (see clean).
//   A verified set gets up to 6 more lines of its set and evset's replacement sequences; with
//   `dirty`, 15 more, and T's eviction after the set is filled with 15 lines of which 0, 5, 10 or
//   15 were written (dirty), T read last, and 1..16 new lines read.
//   With `scan` (the reading flush), the set function as a program sees it: every line of PAGES
//   2 MiB pages (default 512: the whole buffer) tested for T's set, with T and 15 lines of the
//   verified set read first (then a 16th line of the set evicts T, the least recent): in groups
//   of 256, one by one within the groups that evicted T, each line found 3 times more.
//   -> l2_sets_reduce_trace.csv (target, tests, lines), l2_sets_reduce_lines.csv (target, role,
//      line_offset_bytes), l2_sets_reduce_summary.csv, l2_sets_reduce_policy.csv (as evset's),
//      l2_sets_reduce_dirty.csv (target, dirty_lines, new_lines, rep, cycles, evicted),
//      l2_sets_scan.csv (target, target_offset_bytes, line_offset_bytes, evicts_of_3),
//      l2_sets_scan_summary.csv (per target: lines scanned, groups and lines that evicted T,
//      the controls)
// order: is the outcome for one pool decided, and by what? Pools of N = 2^16 .. 2^17.5 lines
//   around the knee of `curve`, each tested 6 times with the pool read by all 1024 threads (the
//   order they reach the L2 varies from trial to trial) and 6 times read by thread 0 alone as a
//   dependent chain (the same order every trial). A cache of fixed sets with LRU or tree-PLRU
//   decides T's fate by the pool alone (every trial alike); one whose victims depend on the order
//   of the misses decides it alike only in the fixed order; one with a random element in neither.
//   -> l2_sets_order.csv (order, target, pool_lines, pool_seed, rep, cycles, evicted)
// clean: does the flush's dirt decide what one side keeps? The eviction curve (pools of 8 .. 64 MiB,
//   3 pools a size, 2 trials each) after the usual flush, which leaves every set full of dirty
//   lines, and after one that reads 192 MiB instead (`ld.global.cg`), which leaves them clean.
//   -> l2_sets_clean.csv (flush, target, pool_lines, pool_seed, rep, cycles, evicted)
// dirtvol: after the reading flush, the last W MiB of the flush buffer (lines the L2 holds, clean)
//   are written again by the whole GPU, so W MiB of the L2 turns dirty without a line moving;
//   then the host waits `wait_ms`, and T and a pool of 16 or 22.6 MiB follow as in curve. The
//   writing flush is W = 192 (every line it leaves dirty).
//   -> l2_sets_dirtvol.csv (dirty_mib, wait_ms, target, pool_lines, pool_seed, rep, cycles, evicted)
#include <chrono>
#include <thread>
#include <cmath>
#include <string>
#include "micro.cuh"

#define THREADS 1024

__device__ __forceinline__ unsigned long long ldcg(const unsigned long long* p) {
  unsigned long long r; asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory"); return r;
}

__global__ void flush_l2(double* buf, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) buf[i] = (double)i;
}

// Thread 0 writes 8 bytes (zeros: the buffer stays all zeros) to each line of seq in order,
// leaving them dirty in the L2.
__global__ void store_seq(char* base, const unsigned* seq, int n) {
  if (threadIdx.x == 0)
    for (int i = 0; i < n; i++) *(volatile unsigned long long*)(base + (size_t)seq[i] * 128) = 0ull;
}

// Rewrites elements [from, n) of the flush buffer (what the reading flush read last).
__global__ void dirty_tail(double* buf, long from, long n) {
  for (long i = from + blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) buf[i] = 0.0;
}

// The same lines read instead of written: the L2 ends up full of clean lines.
__global__ void flush_l2_reading(const double* buf, long n, double* sink) {
  double a = 0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    a += __longlong_as_double((long long)ldcg((const unsigned long long*)(buf + i)));
  if (a == 1.0) sink[0] = a;
}

// The buffer is all zeros, so `acc` stays 0 while every load waits for the one before.
// probe = ~0u: no probe (the sequence and the pool only).
__global__ void l2_test(const char* base, const unsigned* seq, int nseq, const unsigned* pool, int npool, unsigned probe,
                        long long* out) {
  __shared__ volatile unsigned long long sink;
  unsigned long long acc = 0;
  if (threadIdx.x == 0)
    for (int i = 0; i < nseq; i++) acc += ldcg((const unsigned long long*)(base + (size_t)seq[i] * 128 + acc));
  __syncthreads();
  unsigned long long a2 = 0;
  for (int i = threadIdx.x; i < npool; i += THREADS) a2 += ldcg((const unsigned long long*)(base + (size_t)pool[i] * 128));
  __syncthreads();
  if (threadIdx.x == 0 && probe != ~0u) {
    for (long long w = clk(); clk() - w < 20000;) {}  // let the pool's write-backs drain
    const unsigned long long* p = (const unsigned long long*)(base + (size_t)probe * 128 + (acc & a2));
    long long t0 = clk();
    unsigned long long v = ldcg(p);
    sink = v;
    long long t1 = clk();
    out[0] = t1 - t0;
    out[1] = smid();
    out[2] = (long long)(acc + a2 + sink);
  }
}

// The set-mate scan: for each group of candidates, thread 0 reads `fill` in order (T first, then
// 15 more lines of its set: the set then holds exactly these 16, T the least recent), all threads
// read the group's candidates, and thread 0 times T. T misses iff a candidate fell into its set.
// Groups run back to back in one launch; a group with two set-mates evicts T and fill[1] too, and
// the next group's fill restores the set. out[g] = cycles of T's read; out[groups] = the SM.
__global__ void scan_groups(const char* base, const unsigned* fill, int nfill, const unsigned* cand, long ncand,
                            int group, long long* out) {
  __shared__ volatile unsigned long long sink;
  long groups = (ncand + group - 1) / group;
  for (long g = 0; g < groups; g++) {
    unsigned long long acc = 0;
    if (threadIdx.x == 0)
      for (int i = 0; i < nfill; i++) acc += ldcg((const unsigned long long*)(base + (size_t)fill[i] * 128 + acc));
    __syncthreads();
    unsigned long long a2 = 0;
    for (long i = g * group + threadIdx.x, end = (g + 1) * group < ncand ? (g + 1) * group : ncand; i < end; i += THREADS)
      a2 += ldcg((const unsigned long long*)(base + (size_t)cand[i] * 128));
    if (a2 == 1) sink = a2;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (long long w = clk(); clk() - w < 1000;) {}
      const unsigned long long* p = (const unsigned long long*)(base + (size_t)fill[0] * 128 + (acc & a2));
      long long t0 = clk();
      unsigned long long v = ldcg(p);
      sink = v;
      long long t1 = clk();
      out[g] = t1 - t0;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[groups] = smid();
}

// Two SMs: a block on SM `sm_a` reads T (thread 0), then a block on SM `sm_b` reads the pool (all
// threads), then SM a times T again. 264 blocks of 1024 threads are all resident at once (two per
// SM), so the blocks can wait for each other; the first block found on each SM takes its role.
__global__ void cross_test(const char* base, unsigned T, const unsigned* pool, int npool, int sm_a, int sm_b, int* claim,
                           volatile int* flag, long long* out) {
  __shared__ int role;
  __shared__ volatile unsigned long long sink;
  if (threadIdx.x == 0) {
    unsigned sm = smid();
    role = 0;
    if ((int)sm == sm_a && atomicCAS(&claim[0], 0, 1) == 0) role = 1;
    else if ((int)sm == sm_b && atomicCAS(&claim[1], 0, 1) == 0) role = 2;
  }
  __syncthreads();
  if (role == 1 && threadIdx.x == 0) {
    unsigned long long v = ldcg((const unsigned long long*)(base + (size_t)T * 128));
    sink = v;
    __threadfence();
    flag[0] = 1;
    long long w0 = clk();
    while (flag[1] == 0 && clk() - w0 < 4000000000ll) {}
    for (long long w = clk(); clk() - w < 20000;) {}
    const unsigned long long* p = (const unsigned long long*)(base + (size_t)T * 128 + (sink & 0));
    long long t0 = clk();
    v = ldcg(p);
    sink = v;
    long long t1 = clk();
    out[0] = flag[1] ? t1 - t0 : -1;
  } else if (role == 2) {
    if (threadIdx.x == 0) { long long w0 = clk(); while (flag[0] == 0 && clk() - w0 < 4000000000ll) {} }
    __syncthreads();
    unsigned long long a = 0;
    for (int i = threadIdx.x; i < npool; i += THREADS) a += ldcg((const unsigned long long*)(base + (size_t)pool[i] * 128));
    if (a == 1) sink = a;
    __syncthreads();
    if (threadIdx.x == 0) { __threadfence(); flag[1] = 1; }
  }
}

struct Bench {
  char* base; double* fl; long nfl; unsigned *d_seq, *d_pool; long long* d_out; long tests = 0;
  // flush_mid: flush once more between the sequence and pool, and the probe.
  int* d_claim = nullptr;
  // T read on SM a, the pool on SM b, T timed on SM a; -1 if the blocks did not meet.
  long long cross(unsigned T, const std::vector<unsigned>& pool, int sm_a, int sm_b) {
    if (!d_claim) CK(cudaMalloc(&d_claim, 16));
    CK(cudaMemset(d_claim, 0, 16));
    flush_l2<<<264, 1024>>>(fl, nfl);
    CK(cudaMemcpy(d_pool, pool.data(), pool.size() * 4, cudaMemcpyHostToDevice));
    cross_test<<<264, THREADS>>>(base, T, d_pool, (int)pool.size(), sm_a, sm_b, d_claim, d_claim + 2, d_out);
    long long h; CK(cudaMemcpy(&h, d_out, sizeof h, cudaMemcpyDeviceToHost));
    tests++;
    return h;
  }
  bool reading_flush = false;  // flush by reading (clean lines) instead of writing
  void flush() {
    if (reading_flush) flush_l2_reading<<<264, 1024>>>(fl, nfl, (double*)d_out + 4);
    else flush_l2<<<264, 1024>>>(fl, nfl);
  }
  // After the flush, thread 0 writes `stores` in order, then reads `seq` in order; then the probe.
  long long run_after_stores(const std::vector<unsigned>& stores, const std::vector<unsigned>& seq, unsigned probe) {
    flush();
    if (!stores.empty()) CK(cudaMemcpy(d_pool, stores.data(), stores.size() * 4, cudaMemcpyHostToDevice));
    if (!seq.empty()) CK(cudaMemcpy(d_seq, seq.data(), seq.size() * 4, cudaMemcpyHostToDevice));
    store_seq<<<1, 32>>>(base, d_pool, (int)stores.size());
    l2_test<<<1, THREADS>>>(base, d_seq, (int)seq.size(), d_pool, 0, probe, d_out);
    long long h[3]; CK(cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost));
    tests++;
    return h[0];
  }
  // The reading flush, then `dirty_mib` MiB of its last lines written again, a wait, then run's steps.
  long long run_dirtied(double dirty_mib, int wait_ms, const std::vector<unsigned>& seq, const std::vector<unsigned>& pool,
                        unsigned probe) {
    flush_l2_reading<<<264, 1024>>>(fl, nfl, (double*)d_out + 4);
    long words = (long)(dirty_mib * (1 << 20) / 8);
    if (words > 0) dirty_tail<<<264, 1024>>>(fl, nfl - std::min(words, nfl), nfl);
    CK(cudaDeviceSynchronize());
    if (wait_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    if (!seq.empty()) CK(cudaMemcpy(d_seq, seq.data(), seq.size() * 4, cudaMemcpyHostToDevice));
    if (!pool.empty()) CK(cudaMemcpy(d_pool, pool.data(), pool.size() * 4, cudaMemcpyHostToDevice));
    l2_test<<<1, THREADS>>>(base, d_seq, (int)seq.size(), d_pool, (int)pool.size(), probe, d_out);
    long long h[3]; CK(cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost));
    tests++;
    return h[0];
  }
  // After the reading flush, scan_groups over `cand` in groups of `group`: T's read per group,
  // and the SM it ran on in `sm`.
  std::vector<long long> scan(const std::vector<unsigned>& fill, const std::vector<unsigned>& cand, int group,
                              long long* sm) {
    long groups = ((long)cand.size() + group - 1) / group;
    unsigned* d_cand; long long* d_res;
    CK(cudaMalloc(&d_cand, std::max<size_t>(cand.size(), 1) * 4)); CK(cudaMalloc(&d_res, (groups + 1) * 8));
    CK(cudaMemcpy(d_cand, cand.data(), cand.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_seq, fill.data(), fill.size() * 4, cudaMemcpyHostToDevice));
    flush_l2_reading<<<264, 1024>>>(fl, nfl, (double*)d_out + 4);
    scan_groups<<<1, THREADS>>>(base, d_seq, (int)fill.size(), d_cand, (long)cand.size(), group, d_res);
    std::vector<long long> res(groups + 1);
    CK(cudaMemcpy(res.data(), d_res, res.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_cand)); CK(cudaFree(d_res));
    tests += groups;
    *sm = res[groups];
    res.pop_back();
    return res;
  }
  long long run(const std::vector<unsigned>& seq, const std::vector<unsigned>& pool, unsigned probe, long long* sm = nullptr,
                bool flush_mid = false) {
    flush();
    if (!seq.empty()) CK(cudaMemcpy(d_seq, seq.data(), seq.size() * 4, cudaMemcpyHostToDevice));
    if (!pool.empty()) CK(cudaMemcpy(d_pool, pool.data(), pool.size() * 4, cudaMemcpyHostToDevice));
    if (flush_mid) {
      l2_test<<<1, THREADS>>>(base, d_seq, (int)seq.size(), d_pool, (int)pool.size(), ~0u, d_out);
      flush();
      l2_test<<<1, THREADS>>>(base, d_seq, 0, d_pool, 0, probe, d_out);
    } else {
      l2_test<<<1, THREADS>>>(base, d_seq, (int)seq.size(), d_pool, (int)pool.size(), probe, d_out);
    }
    long long h[3]; CK(cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost));
    tests++;
    if (sm) *sm = h[1];
    return h[0];
  }
};

static std::vector<unsigned> without(const std::vector<unsigned>& s, size_t lo, size_t hi) {
  std::vector<unsigned> r(s.begin(), s.begin() + lo);
  r.insert(r.end(), s.begin() + hi, s.end());
  return r;
}

// `n` lines of the permutation from `off` on, T left out: a pool of random lines other than T.
static std::vector<unsigned> pool_from(const std::vector<uint64_t>& perm, size_t off, size_t n, unsigned T) {
  std::vector<unsigned> pool;
  for (size_t i = off; pool.size() < n; i++) if (perm[i] != T) pool.push_back((unsigned)perm[i]);
  return pool;
}

// The cycles above which a read of T missed: the median of 5 reads that hit (`hit()`) + 70.
template <class Hit>
static long long evicted_above(Hit hit) {
  std::vector<long long> hits;
  for (int i = 0; i < 5; i++) hits.push_back(hit());
  std::sort(hits.begin(), hits.end());
  return hits[2] + 70;
}

// `evicts` decided by 2 of 3 trials (the third only when the first two disagree).
template <class Evicts>
static auto two_of_three(Evicts evicts) {
  return [evicts](const std::vector<unsigned>& x) {
    int k = evicts(x); k += evicts(x); if (k == 1) k += evicts(x); return k >= 2;
  };
}

static std::vector<unsigned> with_prefix(const std::vector<unsigned>& f, const std::vector<unsigned>& p, size_t k) {
  std::vector<unsigned> r = f;
  r.insert(r.end(), p.begin(), p.begin() + k);
  return r;
}

// Shortest k in (lo, hi] such that f + p[0..k) evicts T, given that hi does and lo does not.
template <class Evicts>
static size_t shortest_evicting(Evicts evicts, const std::vector<unsigned>& f, const std::vector<unsigned>& p, size_t lo,
                                size_t hi) {
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (evicts(with_prefix(f, p, mid))) hi = mid; else lo = mid;
  }
  return hi;
}

// More lines of T's set, given a verified minimal set S: S less its last line plus the shortest
// evicting prefix of the rest of the pool ends in one. At most `most`.
template <class Evicts>
static std::vector<unsigned> more_of_set(Evicts evicts, const std::vector<unsigned>& S, const std::vector<unsigned>& pool,
                                         size_t most) {
  std::vector<unsigned> extra, base_set(S.begin(), S.end() - 1), rest;
  for (unsigned x : pool) if (std::find(S.begin(), S.end(), x) == S.end()) rest.push_back(x);
  while (extra.size() < most && !rest.empty() && evicts(with_prefix(base_set, rest, rest.size()))) {
    size_t k = shortest_evicting(evicts, base_set, rest, 0, rest.size());
    extra.push_back(rest[k - 1]);
    rest.erase(rest.begin(), rest.begin() + k);
  }
  return extra;
}

// Serial replacement sequences over the lines C of one set of W ways (C[0] = T, C[1..W) the rest
// of a fill, C[W..) lines beyond it), each line probed after each sequence in a trial of its own.
// Rows: target, sequence, rep, probed, cycles, evicted.
static void replacement_sequences(Bench& b, FILE* fp, int t, const std::vector<unsigned>& C, size_t W, long long thr) {
  size_t E = C.size() - W;  // lines beyond one set's worth
  std::vector<std::pair<std::string, std::vector<unsigned>>> seqs;
  auto fill = [&]() { return std::vector<unsigned>(C.begin(), C.begin() + W); };
  {  // fill the set, then one new line
    auto s = fill(); s.push_back(C[W]); seqs.push_back({"fill-1new", s});
  }
  {  // fill, hit c0, one new line
    auto s = fill(); s.push_back(C[0]); s.push_back(C[W]); seqs.push_back({"fill-hit0-1new", s});
  }
  {  // fill, hit the first half, then half a set of new lines (as many as there are)
    auto s = fill(); for (size_t i = 0; i < W / 2; i++) s.push_back(C[i]);
    for (size_t i = 0; i < std::min(E, W / 2); i++) s.push_back(C[W + i]);
    seqs.push_back({"fill-hitfirsthalf-newhalf", s});
  }
  {  // fill, then every new line
    auto s = fill(); for (size_t i = 0; i < E; i++) s.push_back(C[W + i]); seqs.push_back({"fill-allnew", s});
  }
  if (E >= 2) {  // fill, hit every line once more in the same order, then 2 new lines
    auto s = fill(); for (size_t i = 0; i < W; i++) s.push_back(C[i]);
    s.push_back(C[W]); s.push_back(C[W + 1]); seqs.push_back({"fill-hitall-2new", s});
  }
  if (E >= 2) {  // fill, hit the last line 3 times, then 2 new lines
    auto s = fill(); for (int k = 0; k < 3; k++) s.push_back(C[W - 1]);
    s.push_back(C[W]); s.push_back(C[W + 1]); seqs.push_back({"fill-hitlast3x-2new", s});
  }
  // Where LRU and tree-PLRU part (whatever the tree's state): after the fill and a hit on c2 or
  // c8, one new line evicts c0 under LRU and c1 under tree-PLRU; after a hit on c1 or c5, two new
  // lines evict c0 and c2 / c0 and c1 under LRU and c0 and c3 under tree-PLRU.
  for (size_t h : {2, 8, 1, 5}) {
    if (h >= W || E < 2) break;
    auto s = fill(); s.push_back(C[h]); s.push_back(C[W]);
    if (h == 1 || h == 5) s.push_back(C[W + 1]);
    seqs.push_back({"fill-hit" + std::to_string(h) + "-" + std::to_string(s.size() - W - 1) + "new", s});
  }
  for (auto& [name, s] : seqs)
    for (int rep = 0; rep < 3; rep++)
      for (size_t i = 0; i < C.size(); i++) {
        long long c = b.run(s, {}, C[i]);
        fprintf(fp, "%d,%s,%d,%zu,%lld,%d\n", t, name.c_str(), rep, i, c, (int)(c > thr));
      }
  fflush(fp);
}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: l2_sets OUTDIR curve [TARGETS [HOME_MASK]] | cross [TARGETS] | evset [TARGETS] | reuse [TARGETS] | reduce [TARGETS [POOL [FLUSH [dirty|scan [PAGES]]]]] | order [TARGETS] | clean [TARGETS] | dirtvol [TARGETS]\n"); return 2; }
  std::string dir = argv[1], mode = argv[2];
  int targets = argc > 3 ? atoi(argv[3]) : 4;
  const size_t bytes = 1ull << 30, lines = bytes / 128;
  const int NPOOL = 1 << 20;
  Bench b;
  CK(cudaMalloc(&b.base, bytes)); CK(cudaMemset(b.base, 0, bytes));
  b.nfl = (192l << 20) / 8; CK(cudaMalloc(&b.fl, b.nfl * 8));
  CK(cudaMalloc(&b.d_seq, (NPOOL + 1) * 4)); CK(cudaMalloc(&b.d_pool, NPOOL * 4)); CK(cudaMalloc(&b.d_out, 64));
  Rng rng(20261124);
  if (mode == "curve") {
    // Does the flush evict? Does a random pool of N lines evict a target?
    FILE* fc = fopen((dir + "/l2_sets_curve.csv").c_str(), "w");
    if (!fc) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    fprintf(fc, "kind,target,pool_lines,pool_seed,rep,cycles,sm\n");
    for (int i = 0; i < 32; i++) {
      unsigned X = (unsigned)rng.below(lines);
      long long sm;
      for (int k = 0; k < 3; k++) {
        long long c = b.run({X}, {}, X, &sm);
        fprintf(fc, "reread,%u,0,0,%d,%lld,%lld\n", X, k, c, sm);
        c = b.run({X}, {}, X, &sm, true);
        fprintf(fc, "flushed,%u,0,0,%d,%lld,%lld\n", X, k, c, sm);
        c = b.run({}, {}, X, &sm);
        fprintf(fc, "cold,%u,0,0,%d,%lld,%lld\n", X, k, c, sm);
      }
    }
    // Home of every line relative to the measuring SM: the parity of the within-page bits given
    // on the command line (HOME_MASK, hex) and one constant per 2 MiB page, read off the cold
    // latency of the page's first line (a far-homed line comes from DRAM through the far
    // partition: ~750 against ~580 cycles on the H100).
    unsigned long long home_mask = argc > 4 ? strtoull(argv[4], nullptr, 16) : 0;
    std::vector<int> page_far(bytes >> 21, 0);
    if (home_mask) {
      std::vector<long long> cold(page_far.size());
      for (size_t pg = 0; pg < page_far.size(); pg++) {
        std::vector<long long> c;
        for (int k = 0; k < 3; k++) c.push_back(b.run({}, {}, (unsigned)(pg << 14)));
        std::sort(c.begin(), c.end());
        cold[pg] = c[1];
        fprintf(fc, "page,%u,0,0,0,%lld,-1\n", (unsigned)(pg << 14), c[1]);
      }
      std::vector<long long> sorted = cold;
      std::sort(sorted.begin(), sorted.end());
      long long cut = (sorted[sorted.size() / 4] + sorted[sorted.size() * 3 / 4]) / 2;  // about half the pages are far
      for (size_t pg = 0; pg < page_far.size(); pg++) page_far[pg] = cold[pg] > cut;
      fprintf(fc, "page_cut,0,0,0,0,%lld,-1\n", cut);
    }
    auto far_of = [&](unsigned line) {
      unsigned long long a = (unsigned long long)line * 128;
      return page_far[a >> 21] ^ (__builtin_popcountll(a & home_mask & ((1ull << 21) - 1)) & 1);
    };
    std::vector<uint64_t> perm = random_perm(lines, rng);
    // kinds: pool of any lines; with a home mask also pools of near-homed / far-homed lines only
    std::vector<std::string> kinds = {"pool"};
    if (home_mask) { kinds.push_back("pool_near"); kinds.push_back("pool_far"); }
    for (int t = 0; t < targets; t++) {
      unsigned T = (unsigned)rng.below(lines);
      if (home_mask) fprintf(fc, "target_far,%u,0,0,0,%d,-1\n", T, far_of(T));
      for (const std::string& kind : kinds)
      for (int e = 24; e <= 40; e++) {  // N = 2^(e/2): 4096 .. 1M lines, 2 points per octave
        size_t N = (size_t)std::llround(std::pow(2.0, e / 2.0));
        for (int seed = 0; seed < 4; seed++) {
          size_t off = rng.below(lines - 2 * N - 1);
          std::vector<unsigned> pool;
          for (size_t i = off; pool.size() < N && i < lines; i++) {
            unsigned x = (unsigned)perm[i];
            if (x == T) continue;
            if (kind == "pool_near" && far_of(x)) continue;
            if (kind == "pool_far" && !far_of(x)) continue;
            pool.push_back(x);
          }
          if (pool.size() < N) continue;
          for (int k = 0; k < 2; k++) {
            long long sm, c = b.run({T}, pool, T, &sm);
            fprintf(fc, "%s,%u,%zu,%d,%d,%lld,%lld\n", kind.c_str(), T, N, seed, k, c, sm);
          }
        }
      }
      fflush(fc);
    }
    fclose(fc);
    return 0;
  }
  if (mode == "reuse") {
    FILE* fc = fopen((dir + "/l2_sets_reuse.csv").c_str(), "w");
    if (!fc) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    fprintf(fc, "target,reads,pool_lines,pool_seed,rep,cycles,sm\n");
    std::vector<uint64_t> perm = random_perm(lines, rng);
    for (int t = 0; t < targets; t++) {
      unsigned T = (unsigned)rng.below(lines);
      for (int reads : {1, 2, 4}) {
        long long sm;
        // hits: no pool
        for (int k = 0; k < 2; k++) {
          long long c = b.run(std::vector<unsigned>(reads, T), {}, T, &sm);
          fprintf(fc, "%u,%d,0,0,%d,%lld,%lld\n", T, reads, k, c, sm);
        }
        for (int e = 32; e <= 37; e++) {  // N = 2^(e/2): 65536 .. 370728 lines, around the knee of `curve`
          size_t N = (size_t)std::llround(std::pow(2.0, e / 2.0));
          for (int seed = 0; seed < 4; seed++) {
            size_t off = rng.below(lines - N - 1);
            std::vector<unsigned> pool = pool_from(perm, off, N, T);
            for (int k = 0; k < 2; k++) {
              long long c = b.run(std::vector<unsigned>(reads, T), pool, T, &sm);
              fprintf(fc, "%u,%d,%zu,%d,%d,%lld,%lld\n", T, reads, N, seed, k, c, sm);
            }
          }
        }
      }
      fflush(fc);
    }
    fclose(fc);
    return 0;
  }
  if (mode == "dirtvol") {
    FILE* fc = fopen((dir + "/l2_sets_dirtvol.csv").c_str(), "w");
    if (!fc) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    fprintf(fc, "dirty_mib,wait_ms,target,pool_lines,pool_seed,rep,cycles,evicted\n");
    std::vector<uint64_t> perm = random_perm(lines, rng);
    for (int t = 0; t < targets; t++) {
      unsigned T = (unsigned)rng.below(lines);
      long long thr = evicted_above([&] { return b.run_dirtied(0, 0, {T}, {}, T); });
      for (int e : {34, 35}) {  // 16 and 22.6 MiB
        size_t N = (size_t)std::llround(std::pow(2.0, e / 2.0));
        for (int seed = 0; seed < 3; seed++) {
          size_t off = rng.below(lines - N - 1);
          std::vector<unsigned> pool = pool_from(perm, off, N, T);
          for (double w : {0.0, 6.0, 12.0, 24.0, 48.0, 192.0})
            for (int wait : {0, 200})
              for (int k = 0; k < 2; k++) {
                long long c = b.run_dirtied(w, wait, {T}, pool, T);
                fprintf(fc, "%g,%d,%u,%zu,%d,%d,%lld,%d\n", w, wait, T, N, seed, k, c, (int)(c > thr));
              }
        }
      }
      fflush(fc);
      fprintf(stderr, "dirtvol: target %d done\n", t);
    }
    fclose(fc);
    return 0;
  }
  if (mode == "clean") {
    FILE* fc = fopen((dir + "/l2_sets_clean.csv").c_str(), "w");
    if (!fc) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    fprintf(fc, "flush,target,pool_lines,pool_seed,rep,cycles,evicted\n");
    std::vector<uint64_t> perm = random_perm(lines, rng);
    for (int t = 0; t < targets; t++) {
      unsigned T = (unsigned)rng.below(lines);
      for (int reading = 0; reading < 2; reading++) {
        b.reading_flush = reading;
        long long thr = evicted_above([&] { return b.run({T}, {}, T); });
        const char* kind = reading ? "read" : "write";
        for (int k = 0; k < 3; k++) {  // a flush alone, then T: a hit
          long long c = b.run({T}, {}, T);
          fprintf(fc, "%s,%u,0,0,%d,%lld,%d\n", kind, T, k, c, (int)(c > thr));
        }
        for (int e = 32; e <= 38; e++) {  // N = 2^(e/2): 65536 .. 524288 lines (8 .. 64 MiB)
          size_t N = (size_t)std::llround(std::pow(2.0, e / 2.0));
          for (int seed = 0; seed < 3; seed++) {
            size_t off = rng.below(lines - N - 1);
            std::vector<unsigned> pool = pool_from(perm, off, N, T);
            for (int k = 0; k < 2; k++) {
              long long c = b.run({T}, pool, T);
              fprintf(fc, "%s,%u,%zu,%d,%d,%lld,%d\n", kind, T, N, seed, k, c, (int)(c > thr));
            }
          }
        }
      }
      b.reading_flush = false;
      fflush(fc);
      fprintf(stderr, "clean: target %d done\n", t);
    }
    fclose(fc);
    return 0;
  }
  if (mode == "order") {
    FILE* fc = fopen((dir + "/l2_sets_order.csv").c_str(), "w");
    if (!fc) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    fprintf(fc, "order,target,pool_lines,pool_seed,rep,cycles,evicted\n");
    std::vector<uint64_t> perm = random_perm(lines, rng);
    for (int t = 0; t < targets; t++) {
      unsigned T = (unsigned)rng.below(lines);
      long long thr = evicted_above([&] { return b.run({T}, {}, T); });
      for (int e = 32; e <= 35; e++) {  // N = 2^(e/2): 65536 .. 185364 lines
        size_t N = (size_t)std::llround(std::pow(2.0, e / 2.0));
        for (int seed = 0; seed < 3; seed++) {
          size_t off = rng.below(lines - N - 1);
          std::vector<unsigned> pool = pool_from(perm, off, N, T), chain = {T};
          chain.insert(chain.end(), pool.begin(), pool.end());
          for (int k = 0; k < 6; k++) {
            long long c = b.run({T}, pool, T);
            fprintf(fc, "parallel,%u,%zu,%d,%d,%lld,%d\n", T, N, seed, k, c, (int)(c > thr));
            c = b.run(chain, {}, T);
            fprintf(fc, "serial,%u,%zu,%d,%d,%lld,%d\n", T, N, seed, k, c, (int)(c > thr));
          }
        }
      }
      fflush(fc);
      fprintf(stderr, "order: target %d done\n", t);
    }
    fclose(fc);
    return 0;
  }
  if (mode == "reduce") {
    const size_t N0 = argc > 4 ? (size_t)atol(argv[4]) : (1u << 18);
    b.reading_flush = argc > 5 && std::string(argv[5]) == "read";
    const bool dirty = argc > 6 && std::string(argv[6]) == "dirty";
    const bool scan = argc > 6 && std::string(argv[6]) == "scan";
    const size_t scan_pages = argc > 7 ? (size_t)atol(argv[7]) : 512;
    FILE* fm = scan ? fopen((dir + "/l2_sets_scan.csv").c_str(), "w") : nullptr;
    FILE* fn = scan ? fopen((dir + "/l2_sets_scan_summary.csv").c_str(), "w") : nullptr;
    if (scan && (!fm || !fn)) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    if (fm) fprintf(fm, "target,target_offset_bytes,line_offset_bytes,evicts_of_3\n");
    if (fn) fprintf(fn, "target,target_offset_bytes,reduce_sm,scan_sm,threshold,scanned_lines,group,positive_groups,singles,"
                        "positive_singles,evict_3_of_3,control_setmate_evicts_of_8,control_hit_evicts_of_8,seconds\n");
    FILE* fd = dirty ? fopen((dir + "/l2_sets_reduce_dirty.csv").c_str(), "w") : nullptr;
    if (dirty && !fd) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    if (fd) fprintf(fd, "target,dirty_lines,new_lines,rep,cycles,evicted\n");
    FILE* ft = fopen((dir + "/l2_sets_reduce_trace.csv").c_str(), "w");
    FILE* fl = fopen((dir + "/l2_sets_reduce_lines.csv").c_str(), "w");
    FILE* fs = fopen((dir + "/l2_sets_reduce_summary.csv").c_str(), "w");
    FILE* fp = fopen((dir + "/l2_sets_reduce_policy.csv").c_str(), "w");
    if (!ft || !fl || !fs || !fp) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    fprintf(fp, "target,sequence,rep,probed,cycles,evicted\n");
    fprintf(ft, "target,tests,lines\n");
    fprintf(fl, "target,role,line_offset_bytes\n");
    fprintf(fs, "target,target_offset_bytes,sm,hit_cycles,miss_cycles,threshold,pool,pool_evicts_of_5,set_size,stuck,tests,"
                "full_evicts_of_5,minus_one_evicts_of_3_max,seconds\n");
    std::vector<uint64_t> perm = random_perm(lines, rng);
    for (int t = 0; t < targets; t++) {
      auto t0 = std::chrono::steady_clock::now();
      long tests0 = b.tests;
      unsigned T = (unsigned)rng.below(lines);
      std::vector<long long> hits, misses;
      long long sm = -1;
      for (int i = 0; i < 5; i++) hits.push_back(b.run({T}, {}, T, &sm));
      for (int i = 0; i < 3; i++) misses.push_back(b.run({}, {}, T));
      std::sort(hits.begin(), hits.end()); std::sort(misses.begin(), misses.end());
      long long thr = hits[2] + 70;
      auto evicts = [&](const std::vector<unsigned>& s) { return b.run({T}, s, T) > thr; };
      auto evicts_all = [&](const std::vector<unsigned>& s, int n) {
        for (int i = 0; i < n; i++) if (!evicts(s)) return false;
        return true;
      };
      size_t off = rng.below(lines - N0 - 1);
      std::vector<unsigned> S = pool_from(perm, off, N0, T);
      const std::vector<unsigned> pool = S;
      int pool_evicts = 0;
      for (int i = 0; i < 5; i++) pool_evicts += evicts(S);
      bool stuck = false;
      const size_t G = 32;
      while (pool_evicts == 5 && S.size() > 64) {
        std::vector<size_t> order(G);
        for (size_t g = 0; g < G; g++) order[g] = g;
        for (size_t g = G; g > 1; g--) std::swap(order[g - 1], order[rng.below(g)]);
        bool removed = false;
        for (size_t g : order) {
          size_t lo = S.size() * g / G, hi = S.size() * (g + 1) / G;
          std::vector<unsigned> R = without(S, lo, hi);
          if (evicts_all(R, 3)) { S = R; removed = true; break; }
        }
        fprintf(ft, "%d,%ld,%zu\n", t, b.tests - tests0, S.size());
        if (!removed) { stuck = true; break; }
        // keep the groups mixed: the lines of T's set must not end up in one group
        for (size_t i = S.size(); i > 1; i--) std::swap(S[i - 1], S[rng.below(i)]);
      }
      if (pool_evicts == 5 && !stuck)
        for (size_t i = 0; i < S.size();) {
          std::vector<unsigned> R = without(S, i, i + 1);
          if (evicts_all(R, 3)) S = R; else i++;
        }
      fprintf(ft, "%d,%ld,%zu\n", t, b.tests - tests0, S.size());
      int full = 0, minus_max = 0;
      for (int i = 0; i < 5; i++) full += evicts(S);
      for (size_t i = 0; S.size() <= 64 && i < S.size(); i++) {
        std::vector<unsigned> r = without(S, i, i + 1);
        int k = 0;
        for (int j = 0; j < 3; j++) k += evicts(r);
        minus_max = std::max(minus_max, k);
      }
      if (S.size() > 64) minus_max = -1;
      // A verified set: more lines of it, then the replacement sequences over them (as evset).
      std::vector<unsigned> extra;
      bool verified = full == 5 && minus_max == 0 && !S.empty();
      auto evicts_major = two_of_three(evicts);
      if (verified) extra = more_of_set(evicts_major, S, pool, dirty ? 15 : 6);
      fprintf(fl, "%d,target,%llu\n", t, (unsigned long long)T * 128);
      for (size_t i = 0; S.size() <= 64 && i < S.size(); i++) fprintf(fl, "%d,member,%llu\n", t, (unsigned long long)S[i] * 128);
      for (unsigned x : extra) fprintf(fl, "%d,extra,%llu\n", t, (unsigned long long)x * 128);
      std::vector<unsigned> C = {T};
      C.insert(C.end(), S.begin(), S.end());
      C.insert(C.end(), extra.begin(), extra.end());
      if (verified && C.size() >= S.size() + 4) replacement_sequences(b, fp, t, C, S.size(), thr);
      // Dirty lines: the set filled with m1..m15 (the first d written, the rest read) and T read
      // last, then k new lines (m16, e1, ...) read; LRU evicts T at the 16th whatever d.
      if (dirty && verified && S.size() == 16 && extra.size() == 15) {
        std::vector<unsigned> news(S.begin() + 15, S.end());
        news.insert(news.end(), extra.begin(), extra.end());
        for (int d : {0, 5, 10, 15})
          for (size_t k = 1; k <= news.size(); k++)
            for (int rep = 0; rep < 2; rep++) {
              std::vector<unsigned> stores(S.begin(), S.begin() + d), seq(S.begin() + d, S.begin() + 15);
              seq.push_back(T);
              seq.insert(seq.end(), news.begin(), news.begin() + k);
              long long c = b.run_after_stores(stores, seq, T);
              fprintf(fd, "%d,%d,%zu,%d,%lld,%d\n", t, d, k, rep, c, (int)(c > thr));
            }
        fflush(fd);
      }
      // Scan: every line of `scan_pages` 2 MiB pages from T's own on (the buffer wrapping round)
      // tested for T's set, in groups of 256, then one by one in the groups that evicted T, then
      // each line found 3 times more. Controls: S's 16th line alone (evicts T) and T alone (a hit).
      if (scan && verified && S.size() == 16) {
        auto s0 = std::chrono::steady_clock::now();
        std::vector<unsigned> fill = {T};
        fill.insert(fill.end(), S.begin(), S.begin() + 15);
        long long scan_sm = -1;
        std::vector<unsigned> controls;
        for (int i = 0; i < 8; i++) { controls.push_back(S[15]); controls.push_back(T); }
        std::vector<long long> c = b.scan(fill, controls, 1, &scan_sm);
        int pos_ctl = 0, neg_ctl = 0;
        for (int i = 0; i < 8; i++) { pos_ctl += c[2 * i] > thr; neg_ctl += c[2 * i + 1] > thr; }
        const size_t page_lines = 1u << 14, first = (T / page_lines) * page_lines;
        std::vector<unsigned> cand;
        for (size_t i = 0; i < scan_pages * page_lines; i++) cand.push_back((unsigned)((first + i) % lines));
        const int G1 = 256;
        c = b.scan(fill, cand, G1, &scan_sm);
        std::vector<unsigned> singles;
        long positive_groups = 0;
        for (size_t g = 0; g < c.size(); g++)
          if (c[g] > thr) {
            positive_groups++;
            for (size_t i = g * G1; i < std::min(cand.size(), (g + 1) * G1); i++) singles.push_back(cand[i]);
          }
        c = b.scan(fill, singles, 1, &scan_sm);
        std::vector<unsigned> found, again;
        for (size_t i = 0; i < c.size(); i++) if (c[i] > thr) found.push_back(singles[i]);
        for (unsigned x : found) for (int k = 0; k < 3; k++) again.push_back(x);
        c = b.scan(fill, again, 1, &scan_sm);
        int sure = 0;
        for (size_t i = 0; i < found.size(); i++) {
          int k = (c[3 * i] > thr) + (c[3 * i + 1] > thr) + (c[3 * i + 2] > thr);
          sure += k == 3;
          fprintf(fm, "%d,%llu,%llu,%d\n", t, (unsigned long long)T * 128, (unsigned long long)found[i] * 128, k);
        }
        fprintf(fn, "%d,%llu,%lld,%lld,%lld,%zu,%d,%ld,%zu,%zu,%d,%d,%d,%.1f\n", t, (unsigned long long)T * 128, sm, scan_sm,
                thr, cand.size(), G1, positive_groups, singles.size(), found.size(), sure, pos_ctl, neg_ctl,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
        fflush(fm); fflush(fn);
        fprintf(stderr, "target %d: scan of %zu lines: %zu of T's set (%d sure), controls %d/8 %d/8\n", t, cand.size(),
                found.size(), sure, pos_ctl, neg_ctl);
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      fprintf(fs, "%d,%llu,%lld,%lld,%lld,%lld,%zu,%d,%zu,%d,%ld,%d,%d,%.1f\n", t, (unsigned long long)T * 128, sm, hits[2],
              misses[1], thr, N0, pool_evicts, S.size(), (int)stuck, b.tests - tests0, full, minus_max, secs);
      fflush(fs); fflush(fl); fflush(ft);
      fprintf(stderr, "target %d: %zu lines%s (full %d/5, minus one max %d/3), %ld tests, %.1f s\n", t, S.size(),
              stuck ? " (stuck)" : "", full, minus_max, b.tests - tests0, secs);
    }
    fclose(ft); fclose(fl); fclose(fs); fclose(fp);
    if (fd) fclose(fd);
    if (fm) { fclose(fm); fclose(fn); }
    return 0;
  }
  if (mode == "cross") {
    // Does a pool read on another SM evict a line read on SM 0? SM 0 with itself (a second block)
    // is the single-SM case; the others are chosen over the partition map.
    FILE* fc = fopen((dir + "/l2_sets_cross.csv").c_str(), "w");
    if (!fc) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
    fprintf(fc, "sm_a,sm_b,target,pool_lines,pool_seed,rep,cycles\n");
    std::vector<uint64_t> perm = random_perm(lines, rng);
    const int sm_a = 0;
    std::vector<int> sm_bs = {0, 1, 8, 16, 24, 56, 124, 2, 14, 64};
    for (int t = 0; t < targets; t++) {
      unsigned T = (unsigned)rng.below(lines);
      for (int sm_b : sm_bs)
        for (int e = 32; e <= 38; e++) {
          size_t N = (size_t)std::llround(std::pow(2.0, e / 2.0));
          for (int seed = 0; seed < 4; seed++) {
            size_t off = rng.below(lines - N - 1);
            std::vector<unsigned> pool = pool_from(perm, off, N, T);
            for (int k = 0; k < 2; k++) fprintf(fc, "%d,%d,%u,%zu,%d,%d,%lld\n", sm_a, sm_b, T, N, seed, k, b.cross(T, pool, sm_a, sm_b));
          }
        }
      // hits: no pool
      for (int k = 0; k < 5; k++) fprintf(fc, "%d,-1,%u,0,0,%d,%lld\n", sm_a, T, k, b.cross(T, {}, sm_a, 0));
      fflush(fc);
    }
    fclose(fc);
    return 0;
  }
  FILE* ft = fopen((dir + "/l2_sets_trace.csv").c_str(), "w");
  fprintf(ft, "target,tests,found,prefix_left\n");
  FILE* fl = fopen((dir + "/l2_sets_lines.csv").c_str(), "w");
  FILE* fs = fopen((dir + "/l2_sets_summary.csv").c_str(), "w");
  FILE* fp = fopen((dir + "/l2_sets_policy.csv").c_str(), "w");
  if (!fl || !fs || !fp) { fprintf(stderr, "cannot write to %s\n", dir.c_str()); return 1; }
  fprintf(fl, "target,role,index,line_offset_bytes,first_cycles\n");
  fprintf(fs, "target,target_offset_bytes,sm,hit_cycles,miss_cycles,threshold,pool,set_size,tests,full_evicts_of_5,"
              "minus_one_evicts_of_3_max,extra_lines,seconds\n");
  fprintf(fp, "target,sequence,rep,probed,cycles,evicted\n");
  for (int t = 0; t < targets; t++) {
    auto t0 = std::chrono::steady_clock::now();
    long tests0 = b.tests;
    unsigned T = (unsigned)rng.below(lines);
    std::vector<long long> hits, misses;
    long long sm = -1;
    for (int i = 0; i < 5; i++) hits.push_back(b.run({T}, {}, T, &sm));
    for (int i = 0; i < 3; i++) misses.push_back(b.run({}, {}, T));
    std::sort(hits.begin(), hits.end()); std::sort(misses.begin(), misses.end());
    long long thr = hits[2] + 70;
    auto evicts = [&](const std::vector<unsigned>& s) { return b.run({T}, s, T) > thr; };
    // the pool: distinct random lines other than T
    std::vector<uint64_t> perm = random_perm(lines, rng);
    std::vector<unsigned> S = pool_from(perm, 0, NPOOL, T);
    std::vector<unsigned> pool = S;
    // Prefix search: with the lines found so far F, the shortest prefix P[0..k) of the rest of the
    // pool such that F + P[0..k) evicts T ends in a line of T's set (one fewer does not evict).
    // Keep that line, keep only the prefix before it, repeat until F alone evicts T.
    auto evicts_major = two_of_three(evicts);
    std::vector<unsigned> F, P = S;
    bool ok = evicts_major(P);
    while (ok && !evicts_major(F)) {
      if (F.size() >= 256 || P.empty()) { ok = false; break; }
      size_t k = shortest_evicting(evicts_major, F, P, 0, P.size());
      F.push_back(P[k - 1]);
      P.resize(k - 1);
      fprintf(ft, "%d,%ld,%zu,%zu\n", t, b.tests - tests0, F.size(), P.size());
    }
    S = F;
    int full = 0, minus_max = (ok && S.size() <= 256) ? 0 : -1;  // -1: not checked
    for (int i = 0; i < 5; i++) full += evicts(S);
    for (size_t i = 0; ok && S.size() <= 256 && i < S.size(); i++) {
      std::vector<unsigned> r = without(S, i, i + 1);
      int k = 0;
      for (int j = 0; j < 3; j++) k += evicts(r);
      minus_max = std::max(minus_max, k);
    }
    std::vector<unsigned> extra;
    if (ok && full == 5 && minus_max == 0 && !S.empty()) extra = more_of_set(evicts_major, S, pool, 8);
    std::vector<unsigned> C = {T};
    C.insert(C.end(), S.begin(), S.end());
    C.insert(C.end(), extra.begin(), extra.end());
    for (size_t i = 0; i < C.size(); i++) {
      const char* role = i == 0 ? "target" : (i <= S.size() ? "member" : "extra");
      long long first = b.run({}, {}, C[i]);
      fprintf(fl, "%d,%s,%zu,%llu,%lld\n", t, role, i, (unsigned long long)C[i] * 128, first);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fprintf(fs, "%d,%llu,%lld,%lld,%lld,%lld,%d,%zu,%ld,%d,%d,%zu,%.1f\n", t, (unsigned long long)T * 128, sm, hits[2], misses[1],
            thr, ok ? NPOOL : -1, S.size(), b.tests - tests0, full, minus_max, extra.size(), secs);
    fflush(fs); fflush(fl);
    fprintf(stderr, "target %d: set of %zu lines (full %d/5, minus one max %d/3), %zu extra, %ld tests, %.1f s\n", t, S.size(),
            full, minus_max, extra.size(), b.tests - tests0, secs);
    // Replacement sequences over the congruent lines (W = |S| ways, c0 = T).
    size_t W = S.size();
    if (!(ok && full == 5 && minus_max == 0) || C.size() < W + 4) continue;
    replacement_sequences(b, fp, t, C, W, thr);
  }
  fclose(fl); fclose(fs); fclose(fp); fclose(ft);
  return 0;
}
