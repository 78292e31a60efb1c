// One kernel per construct the PTX lifter reads (tests/lift.rs): compiled with
//   nvcc -arch=sm_90 -O3 -ptx constructs.cu -o constructs.ptx   (CUDA 13.5 from the package index)
// and lifted from the committed PTX, so the tests need no nvcc.

// float4 loads and stores: .v4.f32, 16 bytes per thread
__global__ void vec4(const float4* __restrict__ in, float4* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// a forward branch inside the guard: only even threads load the neighbour
__global__ void branch_if(const double* __restrict__ in, double* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = in[i];
  if (threadIdx.x < 16) s += in[i + 1];
  out[i] = s;
}

// 2-D indexing with 32-bit unsigned arithmetic and a clamp (min)
__global__ void clamp2d(const float* __restrict__ in, float* __restrict__ out, int nx, int ny) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  unsigned right = min(x + 1, (unsigned)nx - 1);
  out[y * nx + x] = in[y * nx + right] - in[y * nx + x];
}

// atomicAdd whose result is unused (RED) on a strided address
__global__ void red_stride(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&a[2 * i], 1);
}

// a pointer chase: the address depends on a loaded value
__global__ void chase(const int* __restrict__ next, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int j = next[i];
  out[i] = next[j];
}

// a periodic left neighbour: the select becomes selp, kept whole in the index
__global__ void periodic(const double* __restrict__ in, double* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int left = (i == 0) ? n - 1 : i - 1;
  out[i] = in[left] + in[i];
}
