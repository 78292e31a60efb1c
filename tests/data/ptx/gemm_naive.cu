// validation/gemm.cu's naive matrix product, alone: its k loop has loads and multiply-adds and
// no store, and ptxas unrolls it further than nvcc's PTX does (tests/lift.rs).
__global__ void naive(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[row * n + k] * b[k * n + col];
    c[row * n + col] = s;
  }
}
