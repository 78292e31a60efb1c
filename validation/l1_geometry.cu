// L1 geometry of one SM: capacity, associativity and set indexing, from a single-thread pointer
// chase with ld.global.ca (the lat_chase kernel of micro.cuh; no shared memory, carve-out
// preference 0 = maximum L1). Every run makes two untimed passes over its chain, then times 8192
// dependent loads with clock64; cycles_per_load near the L1 hit latency means all hits, near the
// L2 latency all misses (see latency.csv for both).
//   size_seq   array of 16..256 KiB (8 KiB steps; 288..512 KiB in 32 KiB steps), one pointer per
//              128 B line, visited in address order (cyclic): with LRU replacement, all misses once
//              the array exceeds the capacity
//   size_rand  the same lines in one random cycle (misses grow gradually past capacity)
//   stride     N lines at a fixed stride (128 B .. 64 KiB), visited cyclically in address order:
//              lines that share a set miss once N exceeds the ways (set stride = sets x 128 B
//              under modulo indexing)
//
//   l1_geometry RUNS.csv     (QUICK=1: a few runs)
#include <string>
#include "micro.cuh"

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s RUNS.csv\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  print_device(stdout);
  const size_t maxbytes = 256ul << 20;
  unsigned long long* buf; CK(cudaMalloc(&buf, maxbytes));
  CK(cudaMemset(buf, 0, maxbytes));
  unsigned long long* d_res; CK(cudaMalloc(&d_res, 64));
  CK(cudaFuncSetAttribute(lat_chase<false>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  struct Run { std::string exp; size_t stride; uint64_t lines; };
  std::vector<Run> runs;
  for (size_t kb = 16; kb <= 256; kb += 8) runs.push_back({"size_seq", 128, kb * 1024 / 128});
  for (size_t kb = 288; kb <= 512; kb += 32) runs.push_back({"size_seq", 128, kb * 1024 / 128});
  for (size_t kb = 16; kb <= 256; kb += 8) runs.push_back({"size_rand", 128, kb * 1024 / 128});
  for (size_t kb = 288; kb <= 512; kb += 32) runs.push_back({"size_rand", 128, kb * 1024 / 128});
  const uint64_t counts[] = {2, 4, 6, 8, 12, 16, 24, 32, 64, 256, 1024, 1280, 1536, 1792, 1856, 1920, 1984, 2048};
  for (size_t s = 128; s <= 65536; s *= 2)
    for (uint64_t n : counts) runs.push_back({"stride", s, n});
  if (quick()) runs = {{"size_seq", 128, 128}, {"size_seq", 128, 4096}, {"stride", 65536, 4}, {"stride", 65536, 16}};
  fprintf(f, "kernel,experiment,size_bytes,stride_bytes,lines,warm_steps,steps,cycles,cycles_per_load,globaltimer_ns,sm_id\n");
  Rng rng(4242);
  for (auto& r : runs) {
    std::vector<uint64_t> offs(r.lines);
    if (r.exp == "size_rand") {
      std::vector<uint64_t> p = random_perm(r.lines, rng);
      for (uint64_t i = 0; i < r.lines; i++) offs[i] = p[i] * r.stride;
    } else {
      for (uint64_t i = 0; i < r.lines; i++) offs[i] = i * r.stride;
    }
    const unsigned long long* start = build_chain(buf, offs);
    long warm = 2 * (long)r.lines, steps = 8192;
    lat_chase<false><<<1, 32>>>(start, warm, steps, d_res);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned long long res[4]; CK(cudaMemcpy(res, d_res, sizeof res, cudaMemcpyDeviceToHost));
    fprintf(f, "lat_chase,%s,%llu,%zu,%llu,%ld,%ld,%llu,%.3f,%llu,%llu\n", r.exp.c_str(), (unsigned long long)(r.lines * r.stride),
            r.stride, (unsigned long long)r.lines, warm, steps, res[0], (double)res[0] / steps, res[1], res[3]);
    fflush(f);
  }
  fclose(f);
  printf("l1_geometry: %zu runs\n", runs.size());
  return 0;
}
