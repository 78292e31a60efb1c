// The shared-memory carve-out the driver picks for a kernel that asks for none, and the L1 capacity
// that leaves. l1_geometry.cu measured the L1 with the carve-out preference set to 0 (maximum L1);
// a kernel that sets no preference gets what the driver picks, and Nsight Compute's
// launch__shared_mem_config_size shows it growing with the blocks an SM can hold (H100, star4:
// 8 KiB for 1024-thread blocks, 32 KiB for 256-thread ones). Two parts, one binary:
//   probe     an almost empty kernel (probe_light, 8-byte static shared like lat_chase) launched at
//             block sizes 32 .. 1024, with 0, 2 or 8 KiB of dynamic shared memory, and a kernel
//             held to fewer blocks per SM by its registers (probe_heavy); run it under ncu for
//             launch__shared_mem_config_size and the occupancy limits of every launch
//   chase     micro.cuh's single-thread pointer chase (lat_chase, ld.global, one random cycle of
//             128 B lines, 1536 .. 2304 lines) launched as ONE block of T threads with no
//             preference set: the driver sizes the carve-out for T-thread blocks, so the chain
//             length where misses start is the L1 capacity at that carve-out
//   validation/l1_carveout.sh runs it both ways. l1_carveout RUNS.csv: one row per launch, in launch order (ncu's IDs for the filter
//                            --kernel-name regex:'^(probe|lat_chase)')
#include "micro.cuh"

// Keeps one result so the kernel is not empty; the static shared word matches lat_chase's.
__global__ void probe_light(unsigned long long* out, int has_dynamic) {
  volatile __shared__ unsigned long long sink;
  extern __shared__ unsigned long long dyn[];
  if (threadIdx.x == 0) { sink = blockIdx.x; if (has_dynamic) dyn[0] = sink; }
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = sink;
}

// 64 accumulators live across a loop the compiler cannot shorten: 133 registers per thread on sm_90,
// so an SM holds few blocks whatever their threads.
__global__ void probe_heavy(unsigned long long* out, int n) {
  volatile __shared__ unsigned long long sink;
  double a[64];
#pragma unroll
  for (int i = 0; i < 64; i++) a[i] = threadIdx.x * (i + 1);
  for (int k = 0; k < n; k++) {
#pragma unroll
    for (int i = 0; i < 64; i++) a[i] = a[i] * 1.000001 + a[(i + 1) & 63];
  }
  double s = 0;
#pragma unroll
  for (int i = 0; i < 64; i++) s += a[i];
  if (threadIdx.x == 0) sink = (unsigned long long)s;
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = sink;
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s RUNS.csv\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  print_device(stdout);
  unsigned long long* d_res; CK(cudaMalloc(&d_res, 64));
  fprintf(f, "kernel,block_threads,dynamic_shared_bytes,lines,cycles_per_load,sm_id\n");

  const int blocks[] = {32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512, 640, 768, 1024};
  const int dyn_kib[] = {0, 2, 8};
  for (int d : dyn_kib)
    for (int t : blocks) {
      probe_light<<<264, t, d * 1024>>>(d_res, d > 0);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      fprintf(f, "probe_light,%d,%d,0,,\n", t, d * 1024);
    }
  for (int t : {64, 128, 256}) {
    probe_heavy<<<264, t>>>(d_res, 4);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    fprintf(f, "probe_heavy,%d,0,0,,\n", t);
  }

  const size_t maxbytes = 64ul << 20;
  unsigned long long* buf; CK(cudaMalloc(&buf, maxbytes));
  CK(cudaMemset(buf, 0, maxbytes));
  Rng rng(4242);
  const int chase_threads[] = {1024, 512, 256, 128};
  for (uint64_t lines = 1536; lines <= 2304; lines += 64) {
    std::vector<uint64_t> p = random_perm(lines, rng), offs(lines);
    for (uint64_t i = 0; i < lines; i++) offs[i] = p[i] * 128;
    const unsigned long long* start = build_chain(buf, offs);
    for (int t : chase_threads) {
      long warm = 2 * (long)lines, steps = 8192;
      lat_chase<false><<<1, t>>>(start, warm, steps, d_res);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      unsigned long long res[4]; CK(cudaMemcpy(res, d_res, sizeof res, cudaMemcpyDeviceToHost));
      fprintf(f, "lat_chase,%d,0,%llu,%.3f,%llu\n", t, (unsigned long long)lines, (double)res[0] / steps, res[3]);
      fflush(f);
    }
  }
  fclose(f);
  printf("l1_carveout: done\n");
  return 0;
}
