// Grid-stride loops as CUDA guides write them (tests/lift.rs): the index is the loop's own
// variable, so the loop's test bounds every array's extent. Compiled with
// `nvcc -arch=sm_90 -O3 -ptx gridstride.cu` (CUDA 13) into gridstride.ptx.
__global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

// The same loop reading one element further on: its extent is one more.
__global__ void shifted(const float* __restrict__ in, float* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = in[i] + in[i + 1];
}
