// Block launch overhead: a kernel whose threads do nothing but test a run-time flag that is false
// (so each would store one int if it were true), launched with grids of 1 .. 256 x SMs blocks of
// 32, 128, 256 and 1024 threads, twice each. ncu's gpu__time_duration.sum of these launches
// gives the fixed cost of a kernel and the cost per block / per wave. The first launch of the
// list is a warm-up (marked `warmup` in the runs file).
//
//   launch_overhead RUNS.csv      (QUICK=1: a few grids)
#include "micro.cuh"

__global__ void empty_k(int* out, int flag) {
  if (flag) out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s RUNS.csv\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  print_device(stdout);
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  const int nsm = pr.multiProcessorCount;
  int* out; CK(cudaMalloc(&out, 256l * nsm * 1024 * 4));
  std::vector<long> grids = {1, nsm / 2, nsm, 2l * nsm, 4l * nsm, 8l * nsm, 16l * nsm, 32l * nsm, 64l * nsm, 128l * nsm, 256l * nsm};
  std::vector<int> blocks = {32, 128, 256, 1024};
  int reps = 2;
  if (quick()) { grids = {1, nsm, 16l * nsm}; blocks = {32, 1024}; reps = 1; }
  fprintf(f, "kernel,role,blocks,threads_per_block,blocks_per_sm_max,waves,rep\n");
  empty_k<<<1, 32>>>(out, 0);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  fprintf(f, "empty_k,warmup,1,32,32,1,0\n");
  for (int b : blocks) {
    int per_sm = std::min(32, 2048 / b);
    for (long g : grids)
      for (int r = 0; r < reps; r++) {
        empty_k<<<(unsigned)g, b>>>(out, 0);
        CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
        fprintf(f, "empty_k,measure,%ld,%d,%d,%.4f,%d\n", g, b, per_sm, (double)g / ((double)per_sm * nsm), r);
      }
  }
  fclose(f);
  printf("launch_overhead: done\n");
  return 0;
}
