// Idle load latency versus footprint: one thread of one block follows a chain of dependent 8-byte
// pointer loads (ld.global.ca, i.e. cached in L1 as ordinary loads are) and clock64() times them.
// Profiled under ncu --clock-control base, which also records the SM clock of every launch
// (validation/micro.sh step `latency` writes latency.csv: size, stride, cycles and ns per load).
//
// Patterns (each element is one 8-byte pointer at the start of its own 128-byte line unless said):
//   rand        one element per 128 B line of the array, visited in one random cycle
//   seq         one element per 128 B line, visited in address order (stride 128 B)
//   rand_page4k one element per 4 KiB page (at a random line of it), pages in random order
//   rand_2m     128 B lines visited in random order within one 2 MiB page before the next page
//               (pages in random order): DRAM latency with almost no TLB misses
// Arrays of at most 2^20 elements: one untimed full pass warms the caches, then 2^14 timed steps
// continue around the cycle (so the timed loads see the steady state of repeated passes). Larger
// arrays: the chain is 2^15 distinct elements drawn from the whole array (all far beyond L2, and
// ncu flushes the caches before each launch, so every timed load is a first touch):
// 2^14 untimed steps, then 2^14 timed ones.
//
//   latency RUNS.csv       (QUICK=1: a few sizes only)
#include <algorithm>
#include <string>
#include <unordered_set>
#include "micro.cuh"

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s RUNS.csv\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  print_device(stdout);
  const size_t maxbytes = quick() ? (64ul << 20) : (2ul << 30);
  unsigned long long* buf;
  CK(cudaMalloc(&buf, maxbytes));
  CK(cudaMemset(buf, 0, maxbytes));
  unsigned long long* d_res;
  CK(cudaMalloc(&d_res, 64));
  // Maximum L1 (no shared memory carve-out): as for the stencils, which use no shared memory.
  CK(cudaFuncSetAttribute(lat_chase<false>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));

  std::vector<size_t> sizes;
  for (size_t s = 4096; s <= maxbytes; s *= 2) {
    sizes.push_back(s);
    if (s * 3 / 2 <= maxbytes) sizes.push_back(s * 3 / 2);
  }
  if (quick()) sizes = {4096, 65536, 1u << 20, 8u << 20, 64u << 20};

  fprintf(f, "kernel,pattern,size_bytes,stride_bytes,elements,chain_len,warm_steps,steps,cycles,cycles_per_load,globaltimer_ns,sm_id\n");
  Rng rng(12345);
  const char* patterns[] = {"rand", "seq", "rand_page4k", "rand_2m"};
  for (const char* pat : patterns) {
    std::string ps(pat);
    size_t stride = ps == "rand_page4k" ? 4096 : 128;
    for (size_t size : sizes) {
      if (ps == "rand_page4k" && size < 65536) continue;
      if (ps == "rand_2m" && size < (256ul << 20) && !(quick() && size >= (8u << 20))) continue;
      uint64_t E = size / stride;
      bool full = E <= (1ul << 20) && ps != "rand_2m";
      uint64_t K = full ? E : (1ul << 15);
      long warm = full ? (long)E : (1l << 14);
      long steps = 1l << 14;
      std::vector<uint64_t> offs(K);
      if (ps == "seq") {
        for (uint64_t i = 0; i < K; i++) offs[i] = i * stride;
      } else if (ps == "rand" || ps == "rand_page4k") {
        std::vector<uint64_t> el;
        if (full) el = random_perm(E, rng);
        else {
          std::unordered_set<uint64_t> seen;
          while (el.size() < K) { uint64_t e = rng.below(E); if (seen.insert(e).second) el.push_back(e); }
        }
        for (uint64_t i = 0; i < K; i++) {
          uint64_t e = el[i];
          offs[i] = e * stride;
          if (ps == "rand_page4k") offs[i] += ((e * 0x9E3779B97F4A7C15ull) >> 59) * 128;  // a line 0..31 of the page
        }
      } else {  // rand_2m
        const uint64_t per_page = (2ul << 20) / 128;
        uint64_t pages = size / (2ul << 20);
        std::vector<uint64_t> porder = random_perm(pages, rng);
        uint64_t n = 0;
        for (uint64_t pg = 0; pg < pages && n < K; pg++) {
          std::vector<uint64_t> lines = random_perm(per_page, rng);
          for (uint64_t l = 0; l < per_page && n < K; l++) offs[n++] = porder[pg] * (2ul << 20) + lines[l] * 128;
        }
      }
      const unsigned long long* start = build_chain(buf, offs);
      lat_chase<false><<<1, 32>>>(start, warm, steps, d_res);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      unsigned long long r[4];
      CK(cudaMemcpy(r, d_res, sizeof r, cudaMemcpyDeviceToHost));
      fprintf(f, "lat_chase,%s,%zu,%zu,%llu,%llu,%ld,%ld,%llu,%.3f,%llu,%llu\n", pat, size, stride,
              (unsigned long long)E, (unsigned long long)K, warm, steps, r[0], (double)r[0] / steps, r[1], r[3]);
      fflush(f);
      printf("%-12s %12zu B stride %5zu: %8.1f cycles/load\n", pat, size, stride, (double)r[0] / steps);
    }
  }
  fclose(f);
  return 0;
}
