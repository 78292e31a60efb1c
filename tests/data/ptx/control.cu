// Control flow the PTX lifter reads (tests/lift.rs): nested loops, branches inside loops and
// loops nvcc unrolls with a remainder. Compiled with
//   nvcc -arch=sm_90 -O3 -ptx control.cu -o control.ptx   (CUDA 13.5 from the package index)

// a runtime trip count with nvcc's default unrolling: a loop of n / 4 trips running four
// copies of the body, then a remainder loop of n % 4 trips
__global__ void unrolled(const float* __restrict__ in, float* __restrict__ out, int nx, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  float s = 0;
  for (int k = 0; k < n; k++) s += in[x + k * nx];
  out[x] = s;
}

// nested loops, the inner bound and the addresses using the outer loop's variable: row j of a
// triangle reads j + 1 points
__global__ void triangle(const float* __restrict__ in, float* __restrict__ out, int nx, int m) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  float s = 0;
#pragma unroll 1
  for (int j = 0; j < m; j++) {
#pragma unroll 1
    for (int i = 0; i <= j; i++) s += in[(j * m + i) * nx + x];
  }
  out[x] = s;
}

// a branch inside a loop on the loop variable: even planes are copied, odd ones left
__global__ void alternate(const float* __restrict__ in, float* __restrict__ out, int nx, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
#pragma unroll 1
  for (int z = 0; z < nz; z++) {
    if (z % 2 == 0) out[z * nx + x] = in[z * nx + x];
  }
}

// a branch inside a loop on the thread: only lanes below the limit load
__global__ void lanes(const double* __restrict__ in, double* __restrict__ out, int nx, int nz, int lim) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  double s = 0;
#pragma unroll 1
  for (int z = 0; z < nz; z++) {
    if (threadIdx.x < lim) s += in[z * nx + x];
    out[z * nx + x] = s;
  }
}

// a loop left early on a loaded value: refused (its trip count depends on the data)
__global__ void search(const float* __restrict__ in, int* __restrict__ out, int nx, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  int k = 0;
#pragma unroll 1
  for (; k < n; k++)
    if (in[k * nx + x] < 0) break;
  out[x] = k;
}

// a store under a test of a loaded value (the probes' sink): refused
__global__ void sink(const float* __restrict__ in, float* __restrict__ out, int nx) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  float v = in[x];
  if (v == -1.0f) out[0] = v;
}

// a 64-bit division: nvcc tests whether both operands fit 32 bits and divides in 32 bits if so;
// the test is not lifted, but both paths give the same quotient
__global__ void per_row(const double* __restrict__ in, double* __restrict__ out, long n, long w) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = in[i / w];
}
