// DRAM bandwidth probe for hw-configs' [bandwidth] dram_gbs: a[i] = 2 a[i] + 1 over 512 MiB of
// doubles (far beyond L2), five times. Profile it under ncu (measure.sh does with PROBES=1):
// (dram__bytes_read.sum + dram__bytes_write.sum) / gpu__time_duration.sum is the sustained rate.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__global__ void scale(double* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2.0 * a[i] + 1.0;
}

int main() {
  long n = (512L << 20) / sizeof(double);
  double* a;
  CK(cudaMalloc(&a, n * sizeof(double)));
  CK(cudaMemset(a, 0, n * sizeof(double)));
  for (int r = 0; r < 5; r++) scale<<<(n + 255) / 256, 256>>>(a, n);
  CK(cudaDeviceSynchronize());
  printf("stream: 5 x %ld doubles\n", n);
  return 0;
}
