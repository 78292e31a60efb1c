// validation/gemm.cu's shared-memory tiled matrix product, one tile shape: ptxas merges the four
// broadcast loads as[ty][k] .. as[ty][k + 3] into one LDS.128 (tests/lift.rs).
template <int BX, int BY>
__global__ void tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  __shared__ float as[BY][BX];
  __shared__ float bs[BX][BX];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * BY + ty;
  int col = blockIdx.x * BX + tx;
  float s = 0.0f;
  for (int k0 = 0; k0 < n; k0 += BX) {
    as[ty][tx] = a[row * n + k0 + tx];
#pragma unroll
    for (int r = 0; r < BX / BY; r++) bs[ty + r * BY][tx] = b[(k0 + ty + r * BY) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BX; k++) s += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * n + col] = s;
}

template __global__ void tiled<32, 8>(const float*, const float*, float*, int);
