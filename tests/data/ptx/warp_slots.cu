// A block's warps leave one value each in a helper's static shared array, as block reductions do
// (validation/reductions.cu), for tests/lift.rs. Compiled with
//   nvcc -arch=sm_90 -O3 -ptx warp_slots.cu -o warp_slots.ptx   (CUDA 13.5 from the package index)
// Two kernels inline the helper, so nvcc declares its array once, outside both entries, and
// addresses a warp's slot as (threadIdx.x >> 3) & 0x1ffffffc: a run of bits above the lowest.
__device__ __forceinline__ void to_slots(float v, float* __restrict__ out) {
  __shared__ float slots[8];
  if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 8) out[blockIdx.x * 8 + threadIdx.x] = slots[threadIdx.x];
}
__global__ void warp_slots(const float* __restrict__ in, float* __restrict__ out) {
  to_slots(in[blockIdx.x * blockDim.x + threadIdx.x], out);
}
__global__ void warp_slots_twice(const float* __restrict__ in, float* __restrict__ out) {
  to_slots(2.0f * in[blockIdx.x * blockDim.x + threadIdx.x], out);
}
