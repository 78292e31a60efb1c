// Atomics ptxas aggregates over the warp and one it does not (tests/lift.rs): a warp-uniform
// address with a uniform operand compiles to VOTEU.ANY, UFLO, POPC and one lane's RED adding
// the count; a float sum to one address keeps a RED per lane (each lane's value differs), and
// so do bins that differ from lane to lane.
__global__ void count_all(int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(count, 1);
}
__global__ void sum_all(const float* a, float* sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, a[i]);
}
__global__ void count_bins(int* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[threadIdx.x], 1);
}
