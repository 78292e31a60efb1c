// The L1's set index and associativity, read off single-thread pointer chases (issue 13: with
// eight blocks per SM the H100's L1 loses re-reads of regions scattered over memory that it keeps
// when the same regions lie side by side, tests/data/h100/micro/l1_blocks*.csv).
// Every SM works alone on its own L1: one block per SM runs (a block that lands on an SM already
// taken returns at once), thread 0 chases its SM's pattern of 128-byte lines cyclically, 4
// passes of dependent loads, each load timed with clock64 (over kThresh cycles: a miss), and the
// last pass's misses and which lines they were come back. Everything but the pattern's own lines
// is read with .cg and written with .cg, around the L1. All lines come from one 4 GiB buffer;
// "chunk" = 64 lines (8 KiB), "page" = 2 MiB (256 chunks).
//   groups  which chunks share a set group: chunks 0, 16, .., 112 (one group: 8 of them fit,
//           16 thrash) plus one more chunk; the ninth thrashes iff it joins their group. Every
//           chunk of page 0, chunks 0-15 of pages 1-255, chunk 0 of pages 256-2047; then m = 7,
//           8, 9 chunks 16 apart from each of chunks 0-15.
//   sets    which set a line takes inside its group: the same 8 base chunks plus one line x of
//           a chunk of their group; the base lines that miss with x are its set-mates.
//   chase   contiguous runs against as many lines in 8 runs scattered as l1_blocks.cu's regions
//           of eight blocks by block id (in run order and interleaved) or at random places, and
//           m runs of 64 lines a fixed stride apart.
//   alloc   whether a line that misses under many outstanding loads stays: a block (1 or 32
//           warps) loads n lines of its region (32 lines per warp instruction, one line per warp
//           instruction, or a dependent chase), then thread 0 re-reads them timed.
// carve32: every block also takes 24 KiB of dynamic shared memory, so the driver carves 32 KiB
// (the L1 of l1_blocks.cu's 256-thread blocks, 224 KiB) instead of 8 KiB (248 KiB).
// Found on the H100 (docs/model.md "L1 geometry"): 512 sets of 4 ways, LRU; the set an XOR of
// line-address bits; the lines a launch may keep, its L1 size, fewer than the 2048 tags.
//   l1_index groups|sets|chase|alloc OUT.csv [carve32]
#include <string>
#include "micro.cuh"

typedef unsigned long long u64;
constexpr int kThresh = 120;          // cycles: L1 hit 32 (64 with the clock reads), L2 200+ (latency.csv)
constexpr long kBufLines = 1l << 25;  // 4 GiB

__device__ __forceinline__ u64 ldv(const u64* p) {
  u64 r; asm volatile("ld.global.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory"); return r;
}

constexpr int kMaxChase = 2816;       // lines of the longest chase pattern
constexpr int kBitWords = kMaxChase / 64;
constexpr int kStaged = 1024;       // 4 KiB of shared memory: with the rest, within the 8 KiB carve-out

// One thread chases its SM's pattern (pattern first + smid): `passes` cyclic passes of dependent
// loads, each timed. out[p * 8 + pass] = misses of each pass; bits[p * kBitWords ..] = which lines
// missed in the last pass.
__global__ void pattern_chase(const u64* buf, const long long* lines, const int* start, const int* len,
                              int first, int patterns, int passes, long long* out, u64* bits,
                              unsigned* arrivals) {
  volatile __shared__ u64 sink;
  __shared__ u64 missed[kBitWords];
  __shared__ int stage[kStaged];
  if (threadIdx.x != 0) return;
  unsigned sm = smid();
  const int p = first + (int)sm;
  if (atomicAdd(&arrivals[sm], 1u) != 0 || p >= patterns) return;
  for (int w = 0; w < kBitWords; w++) missed[w] = 0;
  // Everything but the pattern's own lines is read with .cg (L2 only) and a pattern of up to
  // kStaged lines is copied to shared memory first, so that only the pattern takes L1 lines. (A
  // few tests in some runs still show a second set of 4 lines thrashing; neither change removed
  // it, and where it comes from is not known: l1_index_fit.py keeps the tests with one set.)
  const long long* l = lines + __ldcg(start + p);
  const int n = __ldcg(len + p);
  const bool staged = n <= kStaged;
  if (staged) for (int i = 0; i < n; i++) stage[i] = (int)__ldcg(l + i);
  u64 v = 0;
  for (int pass = 0; pass < passes; pass++) {
    long long misses = 0;
    for (int i = 0; i < n; i++) {
      const long long line = staged ? stage[i] : __ldcg(l + i);
      sink = (u64)line;  // waits for the index, so the clock brackets only the data load
      long long t0 = clk();
      v = ldv(buf + (line + (long)v) * 16);
      sink = v;
      long long t1 = clk();
      const bool miss = (t1 - t0) > kThresh;
      misses += miss;
      if (miss && pass == passes - 1) missed[i / 64] |= 1ull << (i % 64);
    }
    __stcg(out + p * 8 + pass, misses);
  }
  for (int w = 0; w < kBitWords; w++) __stcg(bits + (long)p * kBitWords + w, missed[w]);
}

// Does a line that misses under many outstanding loads stay in the L1? Every SM takes one
// configuration: its block (one warp, or 32 with `wide`) loads n lines of its own region, then
// thread 0 reads them again one by one, dependent and timed; out[sm] = how many of them hit.
// How the block loads them: 0 one line per lane and instruction (32 lines per warp instruction,
// all independent), 1 one line per warp instruction (4-byte words, the lanes together one line),
// 2 a dependent chase by thread 0 (one load in flight).
__global__ void alloc_probe(const u64* buf, const int* ns, const int* how, long long* out,
                            unsigned* arrivals) {
  volatile __shared__ u64 sink;
  __shared__ unsigned first;
  unsigned sm = smid();
  if (threadIdx.x == 0) first = atomicAdd(&arrivals[sm], 1u);
  __syncthreads();
  if (first != 0) return;
  const int n = __ldcg(ns + sm), mode = __ldcg(how + sm);
  const u64* region = buf + (1000l + 4096l * sm) * 16;
  u64 acc = 0;
  if (mode == 0) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += ldv(region + (long)i * 16);
  } else if (mode == 1) {
    const unsigned* r32 = (const unsigned*)region;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    for (int i = warp; i < n; i += warps) {
      unsigned w;
      asm volatile("ld.global.u32 %0, [%1];" : "=r"(w) : "l"(r32 + (long)i * 32 + lane) : "memory");
      acc += w;
    }
  } else if (threadIdx.x == 0) {
    u64 v = 0;
    for (int i = 0; i < n; i++) v = ldv(region + ((long)i + (long)v) * 16);
    acc = v;
  }
  sink = acc;  // every load of the first phase has returned
  __syncthreads();
  if (threadIdx.x != 0) return;
  long long hits = 0;
  u64 v = 0;
  for (int i = 0; i < n; i++) {
    long long t0 = clk();
    v = ldv(region + ((long)i + (long)v) * 16);
    sink = v;
    long long t1 = clk();
    hits += (t1 - t0) <= kThresh;
  }
  __stcg(out + sm, hits);
}

// Chases every pattern (lines[start[p] ..][0 .. len[p])) on its own SM, as many launches as it
// takes; returns the last pass's misses of each and, in bits, which lines missed.
static std::vector<long long> chase_all(const u64* buf, const std::vector<long long>& lines, const std::vector<int>& start,
                                        const std::vector<int>& len, int sms, int dyn, unsigned* arrivals,
                                        std::vector<u64>* bits_out = nullptr) {
  const int np = (int)start.size();
  long long* d_lines; int *d_start, *d_len; long long* d_out; u64* d_bits;
  CK(cudaMalloc(&d_lines, lines.size() * 8));
  CK(cudaMemcpy(d_lines, lines.data(), lines.size() * 8, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&d_start, np * 4)); CK(cudaMalloc(&d_len, np * 4));
  CK(cudaMemcpy(d_start, start.data(), np * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_len, len.data(), np * 4, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&d_out, np * 8l * 8)); CK(cudaMemset(d_out, 0xff, np * 8l * 8));
  CK(cudaMalloc(&d_bits, np * 8l * kBitWords));
  CK(cudaFuncSetAttribute(pattern_chase, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  for (int first = 0; first < np; first += sms) {
    CK(cudaMemset(arrivals, 0, 1024 * sizeof(unsigned)));
    pattern_chase<<<2 * sms, 32, dyn>>>(buf, d_lines, d_start, d_len, first, np, 4, d_out, d_bits, arrivals);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  std::vector<long long> out(np * 8l);
  CK(cudaMemcpy(out.data(), d_out, out.size() * 8, cudaMemcpyDeviceToHost));
  if (bits_out) {
    bits_out->resize(np * (long)kBitWords);
    CK(cudaMemcpy(bits_out->data(), d_bits, bits_out->size() * 8, cudaMemcpyDeviceToHost));
  }
  CK(cudaFree(d_lines)); CK(cudaFree(d_start)); CK(cudaFree(d_len)); CK(cudaFree(d_out)); CK(cudaFree(d_bits));
  return out;
}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s groups|sets|chase|alloc OUT.csv [carve32]\n", argv[0]); return 2; }
  const std::string mode = argv[1];
  const bool carve32 = argc > 3 && std::string(argv[3]) == "carve32";
  const int dyn = carve32 ? 24 * 1024 : 0;
  if (mode != "chase" && mode != "alloc" && mode != "groups" && mode != "sets") { fprintf(stderr, "unknown mode %s\n", mode.c_str()); return 2; }
  print_device(stdout);
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  const int sms = pr.multiProcessorCount;
  u64* buf; CK(cudaMalloc(&buf, kBufLines * 128));
  CK(cudaMemset(buf, 0, kBufLines * 128));
  unsigned* arrivals; CK(cudaMalloc(&arrivals, 1024 * sizeof(unsigned)));
  CK(cudaMemset(arrivals, 0, 1024 * sizeof(unsigned)));
  if (mode == "alloc") {
    // 3 ways of loading x 7 sizes, one per SM, with 1 warp and with 32 warps per block.
    std::vector<int> ns(1024, 0), how(1024, 0);
    const int sizes[] = {128, 256, 512, 1024, 1536, 1792, 1920};
    for (int s = 0; s < sms; s++) { how[s] = (s / 7) % 3; ns[s] = sizes[s % 7]; }
    int *d_n, *d_how; long long* d_out;
    CK(cudaMalloc(&d_n, 1024 * 4)); CK(cudaMalloc(&d_how, 1024 * 4)); CK(cudaMalloc(&d_out, 1024 * 8));
    CK(cudaMemcpy(d_n, ns.data(), 1024 * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_how, how.data(), 1024 * 4, cudaMemcpyHostToDevice));
    CK(cudaFuncSetAttribute(alloc_probe, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    FILE* f = fopen(argv[2], "w");
    if (!f) { perror(argv[2]); return 2; }
    fprintf(f, "sm,how,threads,lines,carve_dyn,hits\n");
    const char* names[] = {"lane_per_line", "warp_per_line", "chase"};
    for (int threads : {32, 1024}) {
      CK(cudaMemset(arrivals, 0, 1024 * sizeof(unsigned)));
      CK(cudaMemset(d_out, 0xff, 1024 * 8));
      alloc_probe<<<2 * sms, threads, dyn>>>(buf, d_n, d_how, d_out, arrivals);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      std::vector<long long> out(1024);
      CK(cudaMemcpy(out.data(), d_out, 1024 * 8, cudaMemcpyDeviceToHost));
      for (int s = 0; s < 7 * 3 && s < sms; s++)
        fprintf(f, "%d,%s,%d,%d,%d,%lld\n", s, names[how[s]], threads, ns[s], dyn, out[s]);
    }
    fclose(f);
    printf("l1_index alloc: done\n");
    return 0;
  }
  if (mode == "sets") {
    // Which set of its group a line takes: the base group (chunks 0, 16, .., 112 of the first
    // 2 MiB page, 8 chunks = the group's 8 ways full) plus one line x of a chunk of the same
    // group; the set that x joins holds 9 lines and thrashes, so the base lines that miss in
    // the last pass are x's set-mates. x: every line of chunks 5, 9, 12 and 128 (page 0) and of
    // chunk 0 in pages 1-3 whose page shifts the group by 0 (l1_index_groups_*.csv: pages 9,
    // 13, 22 at offset 0 of their page). missed_bits: 64 bits per base chunk (in the base's order), then x's.
    // The replacement evicts the base lines filled 3rd to 6th of x's set, so further bases
    // (chunk 5 in place of chunk 32 with x in chunk 32, in two orders; chunks 0 and 32 further
    // on with x in chunk 5) link the chunks that the first never shows missing together, and a
    // base in another group (chunks 2, 18, .., 114 with x in chunks 7 and 11) checks that every
    // group takes the same set index.
    struct X { long chunk, offset; int base; };
    std::vector<X> xs;
    for (long c : {5l, 9l, 12l, 128l, 3l * 256, 12l * 256, 15l * 256})
      for (long o = 0; o < 64; o++) xs.push_back({c, o, 0});
    for (int b : {1, 2}) for (long o = 0; o < 64; o++) xs.push_back({32, o, b});
    for (long o = 0; o < 64; o++) xs.push_back({5, o, 3});
    for (long o = 0; o < 64; o++) xs.push_back({5, o, 4});
    for (long c : {7l, 11l}) for (long o = 0; o < 64; o++) xs.push_back({c, o, 5});
    // One page bit at a time: pages 1, 2, 4, 8 shift the group by 2, 2, 3, 3
    // (l1_index_groups_*.csv), so chunk 2, 2, 3, 3 of them falls into the base's group.
    for (long pc : {256l + 2, 512l + 2, 1024l + 3, 2048l + 3}) for (long o = 0; o < 64; o++) xs.push_back({pc, o, 0});
    const long bases[6][8] = {{0, 16, 32, 48, 64, 80, 96, 112}, {0, 16, 5, 48, 64, 80, 96, 112},
                              {112, 96, 80, 64, 48, 5, 16, 0}, {16, 96, 0, 32, 64, 80, 112, 48},
                              {16, 96, 112, 0, 32, 64, 80, 48}, {2, 18, 34, 50, 66, 82, 98, 114}};
    std::vector<long long> lines;
    std::vector<int> start, len;
    for (auto& x : xs) {
      start.push_back((int)lines.size());
      for (long j = 0; j < 8; j++) for (long i = 0; i < 64; i++) lines.push_back(bases[x.base][j] * 64 + i);
      lines.push_back(x.chunk * 64 + x.offset);
      len.push_back((int)(lines.size() - start.back()));
    }
    std::vector<u64> bits;
    std::vector<long long> out = chase_all(buf, lines, start, len, sms, dyn, arrivals, &bits);
    FILE* f = fopen(argv[2], "w");
    if (!f) { perror(argv[2]); return 2; }
    fprintf(f, "chunk,offset,base,carve_dyn,misses_pass3,missed_bits\n");
    for (size_t i = 0; i < xs.size(); i++) {
      fprintf(f, "%ld,%ld,%d,%d,%lld,", xs[i].chunk, xs[i].offset, xs[i].base, dyn, out[i * 8 + 3]);
      for (int w = 0; w < 9; w++) fprintf(f, "%016llx", bits[i * kBitWords + w]);
      fprintf(f, "\n");
    }
    fclose(f);
    printf("l1_index sets: %zu patterns\n", xs.size());
    return 0;
  }
  if (mode == "groups") {
    // Which 8 KiB chunks (64 lines) share a set group: the base is chunks 0, 16, .., 112 of the
    // buffer's first 2 MiB (one group: 8 of them fit, 16 thrash, l1_index_chase_*.csv runs64);
    // a chunk that joins them thrashes all nine iff it falls into their group. Tested: every
    // chunk of the first 2 MiB, the first 16 chunks of each later 2 MiB page up to 512 MiB, and
    // the first chunk of each page up to 4 GiB. Then how many chunks each group holds: m chunks
    // 16 apart from chunk k (k < 16), m = 7, 8, 9.
    struct G { std::string kind; long page, chunk; int m; };
    std::vector<G> gs;
    for (long c = 0; c < 256; c++) if (c % 16 != 0 || c >= 128) gs.push_back({"join", 0, c, 9});
    for (long pg = 1; pg < 256; pg++) for (long c = 0; c < 16; c++) gs.push_back({"join", pg, c, 9});
    for (long pg = 256; pg < 2048; pg++) gs.push_back({"join", pg, 0, 9});
    for (long k = 0; k < 16; k++) for (int m : {7, 8, 9}) gs.push_back({"fill", 0, k, m});
    std::vector<long long> lines;
    std::vector<int> start, len;
    for (auto& g : gs) {
      start.push_back((int)lines.size());
      std::vector<long> chunks;
      if (g.kind == "join") {
        for (long j = 0; j < 8; j++) chunks.push_back(16 * j);
        chunks.push_back(g.page * 256 + g.chunk);
      } else {
        for (long j = 0; j < g.m; j++) chunks.push_back(g.chunk + 16 * j);
      }
      for (long c : chunks) for (long i = 0; i < 64; i++) lines.push_back(c * 64 + i);
      len.push_back((int)(lines.size() - start.back()));
    }
    std::vector<long long> out = chase_all(buf, lines, start, len, sms, dyn, arrivals);
    FILE* f = fopen(argv[2], "w");
    if (!f) { perror(argv[2]); return 2; }
    fprintf(f, "kind,page,chunk,chunks,carve_dyn,misses_pass0,misses_pass1,misses_pass2,misses_pass3\n");
    for (size_t i = 0; i < gs.size(); i++)
      fprintf(f, "%s,%ld,%ld,%d,%d,%lld,%lld,%lld,%lld\n", gs[i].kind.c_str(), gs[i].page, gs[i].chunk, gs[i].m, dyn,
              out[i * 8], out[i * 8 + 1], out[i * 8 + 2], out[i * 8 + 3]);
    fclose(f);
    printf("l1_index groups: %zu patterns\n", gs.size());
    return 0;
  }
  // chase mode: the patterns, one per SM and launch
  std::vector<long long> lines;
  std::vector<int> start, len;
  FILE* f = fopen(argv[2], "w");
  if (!f) { perror(argv[2]); return 2; }
  fprintf(f, "pattern,order,lines,runs,first_block,apart,carve_dyn,misses_pass0,misses_pass1,misses_pass2,misses_pass3,missed_bits\n");
  struct Pat { std::string name, order; long total; int runs, first; long apart; };
  std::vector<Pat> pats;
  for (long total : {1536l, 1664l, 1792l, 1920l}) {
    pats.push_back({"contiguous", "run", total, 1, 0, 0});
    for (int first : {0, 1, 2, 3, 5, 8, 13})
      for (const char* order : {"run", "interleaved"}) pats.push_back({"by_block_id", order, total, 8, first, 0});
    for (int first : {0, 1, 2})
      for (const char* order : {"run", "interleaved"}) pats.push_back({"random_runs", order, total, 8, first, 0});
  }
  // m runs of 64 lines, run j at j x apart: where the L1 starts to miss says how many 64-line
  // runs `apart` lines apart one set group holds.
  for (long apart : {128l, 256l, 512l, 1024l, 4096l, 16384l, 65536l, 25344l, 25344l * 2, 6336l, 192l * 133})
    for (int m : {8, 16, 24, 31, 40}) pats.push_back({"runs64", "run", 64l * m, m, 0, apart});
  Rng rng(77);
  for (auto& p : pats) {
    const long per = p.total / p.runs;
    std::vector<long> bases;
    for (int j = 0; j < p.runs; j++) {
      if (p.name == "contiguous") bases.push_back(1l << 20);
      else if (p.name == "by_block_id") bases.push_back((p.first + 132l * j) * per);  // block b at b x per
      else if (p.name == "runs64") bases.push_back(j * p.apart);
      else bases.push_back((long)rng.below((1l << 24) / per) * per);
    }
    start.push_back((int)lines.size());
    if (p.order == "run") {
      for (long b : bases) for (long i = 0; i < per; i++) lines.push_back(b + i);
    } else {
      for (long i = 0; i < per; i++) for (long b : bases) lines.push_back(b + i);
    }
    len.push_back((int)(lines.size() - start.back()));
  }
  const int np = (int)pats.size();
  std::vector<u64> bits;
  std::vector<long long> out = chase_all(buf, lines, start, len, sms, dyn, arrivals, &bits);
  for (int s = 0; s < np; s++) {
    const Pat& p = pats[s];
    fprintf(f, "%s,%s,%ld,%d,%d,%ld,%d,%lld,%lld,%lld,%lld,", p.name.c_str(), p.order.c_str(), p.total, p.runs, p.first,
            p.apart, dyn, out[s * 8], out[s * 8 + 1], out[s * 8 + 2], out[s * 8 + 3]);
    for (int w = 0; w < (len[s] + 63) / 64; w++) fprintf(f, "%016llx", bits[(long)s * kBitWords + w]);
    fprintf(f, "\n");
  }
  fclose(f);
  printf("l1_index chase: %d patterns\n", np);
  return 0;
}
