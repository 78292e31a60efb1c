// Kernels a user brings every day, written as tutorials and code generators write them, not as
// the simulator's own traces are: measured over 10 or more launch shapes each by
// validation/everyday.sh and lifted from this file by the simulator (issue 53: new families the
// model was never fitted on).
//   saxpy_gridstride   y = a x + y over n floats in a grid-stride loop, the grid a few blocks
//                      per SM (p2 = blocks), as CUDA's best-practice guides launch it
//   copy_float4        a copy in float4 (16 bytes a lane), n floats
//   aos_update         particles as an array of structs of 3 floats (12-byte stride): pos += dt
//                      * vel, n particles
//   conv2d_5x5         2-D 5x5 convolution of an nx x ny float image (pitch nx + 4), its 25
//                      weights in __constant__ memory
//   block_sum          the tutorial block reduction of n floats into one sum a block: a
//                      shared array the size of the block, its stride halving
//                      (`for (s = blockDim.x / 2; s > 0; s >>= 1)`), lifted since 2026-12-07
//   block_sum_strided  the same with the stride doubling and each thread's index 2 s tid (the
//                      tutorial's bank-conflicted second form)
//   block_scan         an inclusive Hillis-Steele scan of each block's n floats (the stride
//                      doubling up to the block)
// Each config line: kernel p1 p2 p3 bx by bz
//   saxpy_gridstride n blocks 1 bx 1 1 | copy_float4 n 1 1 bx 1 1 | aos_update n 1 1 bx 1 1
//   conv2d_5x5 nx ny 1 bx by 1 | block_sum, block_sum_strided, block_scan n 1 1 bx 1 1 (the
//   shared array of bx floats given at launch)
// Every launch gets freshly cudaMalloc'd, zeroed arrays (freed after it), so ncu's ID i is the i-th
// config line. Prints "ID line" per launch.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
static int cdiv(int a, int b) { return (a + b - 1) / b; }

__global__ void saxpy_gridstride(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

__global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

struct Vec3 { float x, y, z; };

__global__ void aos_update(Vec3* __restrict__ pos, const Vec3* __restrict__ vel, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Vec3 p = pos[i];
    const Vec3 v = vel[i];
    p.x += dt * v.x;
    p.y += dt * v.y;
    p.z += dt * v.z;
    pos[i] = p;
  }
}

__constant__ float weights[25];

__global__ void conv2d_5x5(const float* __restrict__ in, float* __restrict__ out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  int pitch = nx + 4;
  const float* c = in + (y + 2) * pitch + x + 2;
  float s = 0.0f;
#pragma unroll
  for (int dy = -2; dy <= 2; dy++)
#pragma unroll
    for (int dx = -2; dx <= 2; dx++) s += weights[(dy + 2) * 5 + dx + 2] * c[dy * pitch + dx];
  out[y * nx + x] = s;
}

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

__global__ void block_sum_strided(const float* __restrict__ in, float* __restrict__ out, int n) {
  extern __shared__ float sdata[];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index + s < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

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

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: everyday LAUNCHES\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 2;
  }
  float w[25];
  for (int k = 0; k < 25; k++) w[k] = 0.04f;
  CK(cudaMemcpyToSymbol(weights, w, sizeof w));
  char line[256], name[64];
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    long p1, p2, p3;
    int bx, by, bz;
    if (sscanf(line, "%63s %ld %ld %ld %d %d %d", name, &p1, &p2, &p3, &bx, &by, &bz) != 7) {
      fprintf(stderr, "bad line: %s", line);
      return 2;
    }
    dim3 block(bx, by, bz);
    if (!strcmp(name, "saxpy_gridstride")) {
      float *x, *y;
      CK(cudaMalloc(&x, p1 * 4)); CK(cudaMalloc(&y, p1 * 4));
      CK(cudaMemset(x, 0, p1 * 4)); CK(cudaMemset(y, 0, p1 * 4));
      saxpy_gridstride<<<(int)p2, block>>>(2.0f, x, y, (int)p1);
      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      CK(cudaFree(x)); CK(cudaFree(y));
    } else if (!strcmp(name, "copy_float4")) {
      float4 *in, *out;
      long n4 = p1 / 4;
      CK(cudaMalloc(&in, n4 * 16)); CK(cudaMalloc(&out, n4 * 16));
      CK(cudaMemset(in, 0, n4 * 16)); CK(cudaMemset(out, 0, n4 * 16));
      copy_float4<<<cdiv((int)n4, bx), block>>>(in, out, (int)n4);
      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      CK(cudaFree(in)); CK(cudaFree(out));
    } else if (!strcmp(name, "aos_update")) {
      Vec3 *pos, *vel;
      CK(cudaMalloc(&pos, p1 * 12)); CK(cudaMalloc(&vel, p1 * 12));
      CK(cudaMemset(pos, 0, p1 * 12)); CK(cudaMemset(vel, 0, p1 * 12));
      aos_update<<<cdiv((int)p1, bx), block>>>(pos, vel, 0.01f, (int)p1);
      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      CK(cudaFree(pos)); CK(cudaFree(vel));
    } else if (!strcmp(name, "conv2d_5x5")) {
      float *in, *out;
      long in_n = (p1 + 4) * (p2 + 4), out_n = p1 * p2;
      CK(cudaMalloc(&in, in_n * 4)); CK(cudaMalloc(&out, out_n * 4));
      CK(cudaMemset(in, 0, in_n * 4)); CK(cudaMemset(out, 0, out_n * 4));
      dim3 grid(cdiv((int)p1, bx), cdiv((int)p2, by));
      conv2d_5x5<<<grid, block>>>(in, out, (int)p1, (int)p2);
      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      CK(cudaFree(in)); CK(cudaFree(out));
    } else if (!strcmp(name, "block_sum") || !strcmp(name, "block_sum_strided") ||
               !strcmp(name, "block_scan")) {
      float *in, *out;
      int blocks = cdiv((int)p1, bx);
      long out_n = strcmp(name, "block_scan") ? blocks : p1;
      CK(cudaMalloc(&in, p1 * 4)); CK(cudaMalloc(&out, out_n * 4));
      CK(cudaMemset(in, 0, p1 * 4)); CK(cudaMemset(out, 0, out_n * 4));
      size_t shared = (size_t)bx * 4;
      if (!strcmp(name, "block_sum")) block_sum<<<blocks, block, shared>>>(in, out, (int)p1);
      else if (!strcmp(name, "block_sum_strided")) block_sum_strided<<<blocks, block, shared>>>(in, out, (int)p1);
      else block_scan<<<blocks, block, shared>>>(in, out, (int)p1);
      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      CK(cudaFree(in)); CK(cudaFree(out));
    } else {
      fprintf(stderr, "unknown kernel %s\n", name);
      return 2;
    }
    line[strcspn(line, "\n")] = 0;
    printf("%d %s\n", id++, line);
  }
  return 0;
}
