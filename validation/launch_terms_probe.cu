// What a warp and a block cost the L1 data pipe beyond their memory instructions: which special
// register reads (S2R of threadIdx, blockIdx, %laneid) take a wavefront, what a __syncthreads
// takes, and what a predicated-off global store or atomic takes. The predicated probe
// (predicated_probe.cu) left these open: there, a kernel reading blockIdx.x alone through S2R
// took no wavefront per warp, one also reading threadIdx.x one, and one reading threadIdx.x
// and %laneid two; each kernel with one barrier took one more per block. Here the components
// of threadIdx and blockIdx read are varied apart, in one launch shape: 2^16 blocks of 256
// threads (32 x 8 for the 2-D ones, 32 x 4 x 2 for the 3-D one), each kernel's values sunk into a
// store that never happens (a comparison with a parameter, -1 at run time).
//   t1c1: threadIdx.x, blockIdx.x          t2c1: threadIdx.x, .y, blockIdx.x
//   t3c1: threadIdx.x, .y, .z, blockIdx.x  t1c3: threadIdx.x, blockIdx.x, .y, .z (grid 2^6 x 2^5 x 2^5)
//   t0c1: blockIdx.x only                  t1c0: threadIdx.x only
//   lane: threadIdx.x and %laneid          bar1, bar2, bar4: t1c1 and k __syncthreads
//   stg2: two stores under lane conditions (ptxas predicates them, as the LDGs of k_ldg)
//   red2: two float atomics under lane conditions
// Run by launch_terms_probe.sh; data in tests/data/h200/launch_terms/.
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
#define SINK(v) if ((int)(v) == key) out[0] = 1.0f;

__global__ void k_t1c1(float* out, int key) { SINK(threadIdx.x + blockIdx.x * 3) }
__global__ void k_t2c1(float* out, int key) { SINK(threadIdx.x + threadIdx.y * 5 + blockIdx.x * 3) }
__global__ void k_t3c1(float* out, int key) { SINK(threadIdx.x + threadIdx.y * 5 + threadIdx.z * 7 + blockIdx.x * 3) }
__global__ void k_t1c3(float* out, int key) { SINK(threadIdx.x + blockIdx.x * 3 + blockIdx.y * 11 + blockIdx.z * 13) }
__global__ void k_t0c1(float* out, int key) { SINK(blockIdx.x * 3) }
__global__ void k_t1c0(float* out, int key) { SINK(threadIdx.x * 3) }
__global__ void k_lane(float* out, int key) {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  SINK(threadIdx.x + lane * 3)
}
__global__ void k_bar(float* out, int key, int k) {
  int v = threadIdx.x + blockIdx.x * 3;
#pragma unroll 1
  for (int i = 0; i < k; i++) { __syncthreads(); v += 1; }
  SINK(v)
}
__global__ void k_stg2(float* out) {
  if (threadIdx.x == 0) out[2 * blockIdx.x + 64] = 1.0f;
  if (threadIdx.x == 1) out[2 * blockIdx.x + 65] = 2.0f;
}
__global__ void k_red2(float* out) {
  if (threadIdx.x == 0) atomicAdd(&out[2 * blockIdx.x + 64], 1.0f);
  if (threadIdx.x == 1) atomicAdd(&out[2 * blockIdx.x + 65], 2.0f);
}

int main() {
  const int blocks = 1 << 16;
  float* out;
  CK(cudaMalloc(&out, (2 * (size_t)blocks + 128) * 4));
  CK(cudaMemset(out, 0, (2 * (size_t)blocks + 128) * 4));
  k_t1c1<<<blocks, 256>>>(out, -1);
  k_t2c1<<<blocks, dim3(32, 8)>>>(out, -1);
  k_t3c1<<<blocks, dim3(32, 4, 2)>>>(out, -1);
  k_t1c3<<<dim3(64, 32, 32), 256>>>(out, -1);
  k_t0c1<<<blocks, 256>>>(out, -1);
  k_t1c0<<<blocks, 256>>>(out, -1);
  k_lane<<<blocks, 256>>>(out, -1);
  k_bar<<<blocks, 256>>>(out, -1, 1);
  k_bar<<<blocks, 256>>>(out, -1, 2);
  k_bar<<<blocks, 256>>>(out, -1, 4);
  k_stg2<<<blocks, 256>>>(out);
  k_red2<<<blocks, 256>>>(out);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  float v[2]; CK(cudaMemcpy(v, out + 64, 8, cudaMemcpyDeviceToHost));
  printf("out[64] %g out[65] %g (expected 2 and 4)\n", v[0], v[1]);
  return 0;
}
