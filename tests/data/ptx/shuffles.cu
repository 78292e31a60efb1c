// Warp shuffles for tests/lift.rs (nvcc -arch=sm_90 -ptx -o shuffles.ptx shuffles.cu): a warp's
// sum of doubles as validation/streams.cu's read_k1 makes it (five shuffles of a double, ten
// SHFL), and the first 16 threads of each block swapping floats pairwise (one shuffle under an
// if: one warp of the block issues it, half its lanes taking part).
__global__ void warp_sum(const double* __restrict__ a, double* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = a[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) out[i >> 5] = s;
}

__global__ void half_swap(const float* __restrict__ a, float* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = a[i];
  if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffu, v, 1);
  b[i] = v;
}
