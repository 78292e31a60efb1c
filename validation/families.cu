// Kernel families beyond the stencil dev set, for the time model (issue 53): each is measured over
// 10 or more block shapes by validation/families.sh, and lifted from this file by the simulator
// (`--kernel validation/families.cu --entry NAME`), so no hand-written trace stands between the
// measurement and the model.
//   jacobi2d_f32 / jacobi2d_f64   2-D 5-point Jacobi, (nx+2)*(ny+2) elements, pitch nx+2
//   transpose_f32                 naive transpose: each warp's stores touch 32 lines, one word each
//   lbm_d3q19                     D3Q19 BGK pull step, SoA doubles (19 load + 19 store streams,
//                                 about 100 registers), (nx+2)(ny+2)(nz+2) cells per population
//   triad_f32 / triad_f64         1-D a[i] = b[i] + s * c[i]
//   scale_f32                     1-D a[i] = 2 * a[i] with few elements per block: block turnover
//   empty_blocks                  no memory access unless flag: block launch and retirement alone
// Each config line: kernel p1 p2 p3 bx by bz
//   jacobi2d_f32 nx ny 1 bx by 1 | transpose_f32 nx ny 1 bx by 1 | lbm_d3q19 nx ny nz bx by bz
//   triad_f32 n 1 1 bx 1 1 | scale_f32 n 1 1 bx 1 1 | empty_blocks blocks 1 1 bx 1 1
// Every launch gets freshly cudaMalloc'd, zeroed arrays (freed after it), so ncu's ID i is the i-th
// config line (only these kernels are profiled). Prints "ID line" per launch.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
static int cdiv(int a, int b) { return (a + b - 1) / b; }

__global__ void jacobi2d_f32(const float* __restrict__ in, float* __restrict__ out, int nx, int ny) {
  int pitch = nx + 2;
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x > nx || y > ny) return;
  int c = y * pitch + x;
  out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - pitch] + in[c + pitch]);
}

__global__ void jacobi2d_f64(const double* __restrict__ in, double* __restrict__ out, int nx, int ny) {
  int pitch = nx + 2;
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x > nx || y > ny) return;
  int c = y * pitch + x;
  out[c] = 0.2 * (in[c] + in[c - 1] + in[c + 1] + in[c - pitch] + in[c + pitch]);
}

__global__ void transpose_f32(const float* __restrict__ in, float* __restrict__ out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny) out[x * ny + y] = in[y * nx + x];
}

#include "lbm_d3q19.cuh"
__global__ void lbm_d3q19(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz, double omega) {
  lbm_d3q19_step(f, g, nx, ny, nz, omega);
}

__global__ void triad_f32(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + s * c[i];
}

__global__ void triad_f64(double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ c, double s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + s * c[i];
}

__global__ void scale_f32(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2.0f * a[i];
}

__global__ void empty_blocks(float* a, int flag) {
  if (flag) a[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f;
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: families LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r"); if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int p1, p2, p3, bx, by, bz;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %d %d %d %d", k, &p1, &p2, &p3, &bx, &by, &bz) < 7) continue;
    dim3 b(bx, by, bz);
    size_t n1 = 0, elem = 4; int arrays = 2;
    if (!strcmp(k, "jacobi2d_f32")) n1 = (size_t)(p1 + 2) * (p2 + 2);
    else if (!strcmp(k, "jacobi2d_f64")) { n1 = (size_t)(p1 + 2) * (p2 + 2); elem = 8; }
    else if (!strcmp(k, "transpose_f32")) n1 = (size_t)p1 * p2;
    else if (!strcmp(k, "lbm_d3q19")) { n1 = (size_t)Q * (p1 + 2) * (p2 + 2) * (p3 + 2); elem = 8; }
    else if (!strcmp(k, "triad_f32")) { n1 = p1; arrays = 3; }
    else if (!strcmp(k, "triad_f64")) { n1 = p1; arrays = 3; elem = 8; }
    else if (!strcmp(k, "scale_f32")) { n1 = p1; arrays = 1; }
    else if (!strcmp(k, "empty_blocks")) { n1 = (size_t)p1 * bx; arrays = 1; }
    else { printf("unknown kernel %s\n", k); return 1; }
    void* a[3] = {0, 0, 0};
    for (int j = 0; j < arrays; j++) { CK(cudaMalloc(&a[j], n1 * elem)); CK(cudaMemset(a[j], 0, n1 * elem)); }
    if (!strcmp(k, "lbm_d3q19")) CK(lbm_fluid_at_rest((double*)a[0], n1 / Q));  // rho = 1
    if (!strcmp(k, "jacobi2d_f32")) jacobi2d_f32<<<dim3(cdiv(p1, bx), cdiv(p2, by)), b>>>((const float*)a[0], (float*)a[1], p1, p2);
    if (!strcmp(k, "jacobi2d_f64")) jacobi2d_f64<<<dim3(cdiv(p1, bx), cdiv(p2, by)), b>>>((const double*)a[0], (double*)a[1], p1, p2);
    if (!strcmp(k, "transpose_f32")) transpose_f32<<<dim3(cdiv(p1, bx), cdiv(p2, by)), b>>>((const float*)a[0], (float*)a[1], p1, p2);
    if (!strcmp(k, "lbm_d3q19")) lbm_d3q19<<<dim3(cdiv(p1, bx), cdiv(p2, by), cdiv(p3, bz)), b>>>((const double*)a[0], (double*)a[1], p1, p2, p3, 1.7);
    if (!strcmp(k, "triad_f32")) triad_f32<<<cdiv(p1, bx), b>>>((float*)a[0], (const float*)a[1], (const float*)a[2], 3.0f, p1);
    if (!strcmp(k, "triad_f64")) triad_f64<<<cdiv(p1, bx), b>>>((double*)a[0], (const double*)a[1], (const double*)a[2], 3.0, p1);
    if (!strcmp(k, "scale_f32")) scale_f32<<<cdiv(p1, bx), b>>>((float*)a[0], p1);
    if (!strcmp(k, "empty_blocks")) empty_blocks<<<p1, b>>>((float*)a[0], 0);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    for (int j = 0; j < arrays; j++) CK(cudaFree(a[j]));
    printf("%d %s", id++, line);
  }
  return 0;
}
