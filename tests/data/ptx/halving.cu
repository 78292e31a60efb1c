// Loops whose variable halves or doubles (tests/lift.rs): the tutorial block reduction, its
// variant that leaves the last warp to shuffles, a Hillis-Steele scan whose stride doubles up to
// the block, a stride doubling up to a parameter, and a stride halving whose last value an
// access after the loop takes. Compiled with
// `nvcc -arch=sm_90 -O3 -ptx halving.cu` (CUDA 13.5) into halving.ptx; halving.sass is ptxas's
// issue order for it (`-arch=sm_90 -lineinfo`, nvdisasm -g -c), as the lifter caches it.
__global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
  extern __shared__ float sdata[];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// The loop stops at 32 and the last warp sums with shuffles.
__global__ void block_sum_warp(const float* __restrict__ in, float* __restrict__ out, int n) {
  extern __shared__ float sdata[];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    float v = sdata[tid] + sdata[tid + 32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (tid == 0) out[blockIdx.x] = v;
  }
}

// An inclusive scan of each block's elements: the stride doubles up to the block.
__global__ void block_scan(const float* __restrict__ in, float* __restrict__ out, int n) {
  extern __shared__ float sdata[];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int d = 1; d < blockDim.x; d *= 2) {
    float t = tid >= d ? sdata[tid - d] : 0.0f;
    __syncthreads();
    sdata[tid] += t;
    __syncthreads();
  }
  if (i < n) out[i] = sdata[tid];
}

// Each thread reads the elements 1, 2, 4, ... below m further on.
__global__ void doubling_reads(const float* __restrict__ in, float* __restrict__ out, int n, int m) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= n) return;
  float s = 0.0f;
  for (int d = 1; d < m; d <<= 1) s += in[x + d];
  out[x] = s;
}

// The stride halving while above 4 and used after the loop: nvcc works out the next address,
// `x + s`, at the end of the body, and the store after the loop takes the last one.
__global__ void after_loop(const float* __restrict__ in, float* __restrict__ out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= n) return;
  unsigned s = blockDim.x;
  float acc = 0.0f;
  for (; s > 4; s >>= 1) acc += in[x + s];
  out[x + s] = acc;
}
