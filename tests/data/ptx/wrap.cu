// 32-bit index arithmetic (tests/lift.rs): compiled with
//   nvcc -arch=sm_90 -O3 -ptx wrap.cu -o wrap.ptx   (CUDA 13.5 from the package index)
// The index is computed as written, in `int` (or `unsigned`): on a domain of more than 2^31 points
// it wraps around, and the lifted kernel must wrap with it.

// a 3D copy indexed with int: (z * ny + y) * nx + x in 32 bits, widened for the address
__global__ void copy_int(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  int idx = (z * ny + y) * nx + x;
  out[idx] = in[idx];
}

// the same index in unsigned arithmetic (wraps modulo 2^32)
__global__ void copy_unsigned(const float* __restrict__ in, float* __restrict__ out, unsigned nx, unsigned ny, unsigned nz) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  unsigned z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  unsigned idx = (z * ny + y) * nx + x;
  out[idx] = in[idx];
}

// the same index in 64 bits: nothing wraps
__global__ void copy_long(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long idx = ((long)z * ny + y) * nx + x;
  out[idx] = in[idx];
}

// a strided gather in int, in[x * stride]: past 2^31 the index turns negative
__global__ void gather_int(const float* __restrict__ in, float* __restrict__ out, int n, int stride) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= n) return;
  out[x] = in[x * stride];
}

// the same in unsigned: past 2^32 the index starts again from 0
__global__ void gather_unsigned(const float* __restrict__ in, float* __restrict__ out, unsigned n, unsigned stride) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= n) return;
  out[x] = in[x * stride];
}
