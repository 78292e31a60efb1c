// Loops with early exits (tests/lift.rs): compiled with
//   nvcc -arch=sm_90 -O3 -ptx breaks.cu -o breaks.ptx   (CUDA 13.5 from the package index)

// a counted loop left early on a parameter: min(n, m) trips
__global__ void sum_break(const float* __restrict__ in, float* __restrict__ out, int nx, int n, int m) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  float s = 0;
#pragma unroll 1
  for (int k = 0; k < n; k++) {
    if (k >= m) break;
    s += in[x + k * nx];
  }
  out[x] = s;
}

// a while loop: walk down a column until the row index passes a limit
__global__ void walk_while(const float* __restrict__ in, float* __restrict__ out, int nx, int start, int stop) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  float s = 0;
  int r = start;
#pragma unroll 1
  while (r < stop) {
    s += in[x + r * nx];
    r += 2;
  }
  out[x] = s;
}

// an exit on the data: the trip count depends on what is loaded, not liftable
__global__ void until_negative(const float* __restrict__ in, float* __restrict__ out, int nx, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  float s = 0;
#pragma unroll 1
  for (int k = 0; k < n; k++) {
    float v = in[x + k * nx];
    if (v < 0) break;
    s += v;
  }
  out[x] = s;
}

// an exit in the middle of the body, on a parameter: the last iteration is cut short, not lifted
__global__ void half_break(const float* __restrict__ in, float* __restrict__ out, int nx, int n, int m) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nx) return;
  float s = 0;
#pragma unroll 1
  for (int k = 0; k < n; k++) {
    s += in[x + 2 * k * nx];
    if (k >= m) break;
    s += in[x + (2 * k + 1) * nx];
  }
  out[x] = s;
}
