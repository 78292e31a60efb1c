// Loops the PTX lifter reads (tests/lift.rs): compiled with
//   nvcc -arch=sm_90 -O3 -ptx loops.cu -o loops.ptx   (CUDA 13.5 from the package index)

// a z sweep kept as a loop (#pragma unroll 1): each thread copies a column of nz points
__global__ void zcopy(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
#pragma unroll 1
  for (int z = 0; z < nz; z++) out[((long)z * ny + y) * nx + x] = in[((long)z * ny + y) * nx + x];
}

// a constant trip count kept as a loop
__global__ void four(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0;
#pragma unroll 1
  for (int k = 0; k < 4; k++) s += in[i + k * n];
  out[i] = s;
}
