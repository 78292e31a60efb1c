// L1 data-pipe wavefronts of memory instructions that a warp issues with no lane active: ptxas
// predicates a short `if` body (`@P0 LDG`, `@P0 STS`) instead of branching around it, so every
// warp issues it. The shared-memory stencil (validation/shared_stencil.cu, jacobi2d_shared) counts
// about two wavefronts more per predicated-off halo load and store pair than the rule for its
// active lanes gives (docs/validation.md). Each kernel: 2^16 blocks of 256 threads; the body runs
// for threadIdx.x == 0 only (warp 0's lane 0), so warps 1-7 of every block issue it with no lane
// active. Every kernel reads blockIdx.x (one wavefront per warp) and stores only under a
// condition never met.
//   none: no predicated instruction (the baseline)
//   ldg:  if (threadIdx.x == 0) a = in[b]; if (threadIdx.x == 1) b = in[b + 1]   (two predicated LDG)
//   ldg_base: the same for lanes 0 and 1 of every warp            (its baseline)
//   sts:  if (threadIdx.x == 0) tile[0] = blockIdx.x            (a predicated STS)
//   sts_base: every warp's STS has lane 0 active                (its baseline)
//   lds:  tile[threadIdx.x] = ...; if (threadIdx.x == 0) v = tile[1]   (a predicated LDS)
//   lds_base: every lane reads tile[1]                            (its baseline)
//   stg:  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x    (a predicated STG, inline PTX)
//   count_all / sum_all: atomicAdd(count, 1) (ptxas aggregates the warp) / atomicAdd(sum, in[i])
// Read with ncu at base clocks (validation/predicated_probe.sh); SASS in sass_ops.txt.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
#define SINK(v) if ((v) == 12345.678f) out[blockIdx.x] = (v);

__global__ void k_none(const float* in, float* out) {
  float v = (float)blockIdx.x;
  SINK(v)
}
// Two loads under different conditions: ptxas predicates them (`@!P0 LDG`), as in
// jacobi2d_shared's halo; one alone it branches around.
__global__ void k_ldg(const float* in, float* out) {
  float a = (float)blockIdx.x, b = 0.0f;
  if (threadIdx.x == 0) a = in[blockIdx.x];
  if (threadIdx.x == 1) b = in[blockIdx.x + 1];
  SINK(a + b)
}
// The same two loads in every warp (lanes 0 and 1 of each): the baseline.
__global__ void k_ldg_base(const float* in, float* out) {
  float a = (float)blockIdx.x, b = 0.0f;
  if (threadIdx.x % 32 == 0) a = in[blockIdx.x];
  if (threadIdx.x % 32 == 1) b = in[blockIdx.x + 1];
  SINK(a + b)
}
__global__ void k_sts(const float* in, float* out) {
  __shared__ float tile[256];
  if (threadIdx.x == 0) tile[0] = (float)blockIdx.x;
  __syncthreads();
  float v = tile[0];
  SINK(v)
}
__global__ void k_sts_base(const float* in, float* out) {
  __shared__ float tile[256];
  tile[0] = (float)blockIdx.x;
  __syncthreads();
  float v = tile[0];
  SINK(v)
}
__global__ void k_lds(const float* in, float* out) {
  __shared__ float tile[256];
  tile[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  float v = (float)blockIdx.x;
  if (threadIdx.x == 0) v = tile[1];
  SINK(v)
}
__global__ void k_lds_base(const float* in, float* out) {
  __shared__ float tile[256];
  tile[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  float v = tile[1];
  SINK(v)
}
__global__ void k_stg(const float* in, float* out) {
  asm volatile("{ .reg .pred p; setp.eq.u32 p, %0, 0; @p st.global.f32 [%1], %2; }"
               :: "r"(threadIdx.x), "l"(out + blockIdx.x), "f"((float)blockIdx.x) : "memory");
}
__global__ void k_count_all(int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(count, 1);
}
__global__ void k_sum_all(const float* in, float* sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, in[i]);
}

int main(int argc, char** argv) {
  const int blocks = 1 << 16, threads = 256, n = blocks * threads;
  float *in, *out; int* count;
  CK(cudaMalloc(&in, (size_t)n * 4)); CK(cudaMalloc(&out, (size_t)n * 4)); CK(cudaMalloc(&count, 4));
  CK(cudaMemset(in, 0, (size_t)n * 4)); CK(cudaMemset(count, 0, 4));
  k_none<<<blocks, threads>>>(in, out);
  k_ldg<<<blocks, threads>>>(in, out);
  k_ldg_base<<<blocks, threads>>>(in, out);
  k_sts<<<blocks, threads>>>(in, out);
  k_sts_base<<<blocks, threads>>>(in, out);
  k_lds<<<blocks, threads>>>(in, out);
  k_lds_base<<<blocks, threads>>>(in, out);
  k_stg<<<blocks, threads>>>(in, out);
  k_count_all<<<blocks, threads>>>(count, n);
  k_sum_all<<<blocks, threads>>>(in, (float*)out, n);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  int c; CK(cudaMemcpy(&c, count, 4, cudaMemcpyDeviceToHost));
  printf("count %d (expected %d)\n", c, n);
  return c == n ? 0 : 1;
}
