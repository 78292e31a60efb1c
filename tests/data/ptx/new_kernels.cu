// Five kernels beyond the stencil set, written exactly as the simulator's traces describe them
// (row-major, x fastest): jacobi2d (float 5-point, 2-D), transpose_naive, transpose_tiled (NVIDIA's
// transposeCoalesced, 32x33 shared tile, blockDim 32 x R), star7_coarse_yz (double 7-point star,
// each thread 2x2 points in y, z) and histogram (int atomicAdd into nbins bins).
// Each config line: kernel p1 p2 p3 bx by bz
//   jacobi2d nx ny 1 bx by 1          in, out: (nx+2)*(ny+2) floats, pitch nx+2
//   transpose_naive nx ny 1 bx by 1   in: ny rows of nx floats, out: nx rows of ny
//   transpose_tiled nx ny 1 32 R 1    grid (nx/32, ny/32)
//   star7_coarse_yz nx ny nz bx by bz in, out: (nx+2)*(ny+2)*(nz+2) doubles; ny, nz even
//   histogram n nbins 1 bx 1 1        data[i] = (7*i) % nbins filled by fill_data (not profiled)
// Every launch gets freshly cudaMalloc'd, zeroed arrays (freed after it). Only the five kernels are
// profiled (ncu -k filter in validation/new_kernels.sh), so ncu's ID i is the i-th config line.
// Data in tests/data/h100/new_kernels/.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
static int cdiv(int a, int b) { return (a + b - 1) / b; }
__global__ void jacobi2d(const float* in, float* out, int nx, int ny) {
  int pitch = nx + 2;
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x > nx || y > ny) return;
  int c = y * pitch + x;
  out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - pitch] + in[c + pitch]);
}
__global__ void transpose_naive(const float* in, float* out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny) out[x * ny + y] = in[y * nx + x];
}
__global__ void transpose_tiled(const float* in, float* out, int nx, int ny) {
  __shared__ float tile[32][33];
  int R = blockDim.y;
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += R) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * nx + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += R) out[(y + j) * ny + x] = tile[threadIdx.x][threadIdx.y + j];
}
__global__ void star7_coarse_yz(const double* in, double* out, int nx, int ny, int nz) {
  int pitch = nx + 2;
  int plane = pitch * (ny + 2);
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int yb = blockIdx.y * blockDim.y + threadIdx.y;
  int zb = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || 2 * yb >= ny || 2 * zb >= nz) return;
  for (int jz = 0; jz < 2; jz++)
    for (int jy = 0; jy < 2; jy++) {
      int y = 2 * yb + jy, z = 2 * zb + jz;
      int c = (z + 1) * plane + (y + 1) * pitch + (x + 1);
      out[c] = 0.4 * in[c] + 0.1 * (in[c - 1] + in[c + 1] + in[c - pitch] + in[c + pitch] + in[c - plane] + in[c + plane]);
    }
}
__global__ void histogram(const int* data, int* hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[data[i]], 1);
}
__global__ void fill_data(int* data, int n, int nbins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = (7 * i) % nbins;
}
int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: new_kernels LAUNCHES\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[32]; int p1, p2, p3, bx, by, bz;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %d %d %d %d", k, &p1, &p2, &p3, &bx, &by, &bz) < 7) continue;
    dim3 b(bx, by, bz);
    void *in = 0, *out = 0; size_t bin = 0, bout = 0;
    if (!strcmp(k, "jacobi2d")) bin = bout = (size_t)(p1 + 2) * (p2 + 2) * sizeof(float);
    else if (!strcmp(k, "transpose_naive") || !strcmp(k, "transpose_tiled")) bin = bout = (size_t)p1 * p2 * sizeof(float);
    else if (!strcmp(k, "star7_coarse_yz")) bin = bout = (size_t)(p1 + 2) * (p2 + 2) * (p3 + 2) * sizeof(double);
    else if (!strcmp(k, "histogram")) { bin = (size_t)p1 * sizeof(int); bout = (size_t)p2 * sizeof(int); }
    else { printf("unknown kernel %s\n", k); return 1; }
    CK(cudaMalloc(&in, bin)); CK(cudaMalloc(&out, bout)); CK(cudaMemset(in, 0, bin)); CK(cudaMemset(out, 0, bout));
    if (!strcmp(k, "jacobi2d")) jacobi2d<<<dim3(cdiv(p1, bx), cdiv(p2, by)), b>>>((const float*)in, (float*)out, p1, p2);
    if (!strcmp(k, "transpose_naive")) transpose_naive<<<dim3(cdiv(p1, bx), cdiv(p2, by)), b>>>((const float*)in, (float*)out, p1, p2);
    if (!strcmp(k, "transpose_tiled")) {
      if (bx != 32 || 32 % by || p1 % 32 || p2 % 32) { printf("transpose_tiled needs bx 32, R | 32, nx, ny multiples of 32\n"); return 1; }
      transpose_tiled<<<dim3(p1 / 32, p2 / 32), b>>>((const float*)in, (float*)out, p1, p2);
    }
    if (!strcmp(k, "star7_coarse_yz")) {
      if (p2 % 2 || p3 % 2) { printf("star7_coarse_yz needs ny, nz even\n"); return 1; }
      star7_coarse_yz<<<dim3(cdiv(p1, bx), cdiv(p2 / 2, by), cdiv(p3 / 2, bz)), b>>>((const double*)in, (double*)out, p1, p2, p3);
    }
    if (!strcmp(k, "histogram")) {
      fill_data<<<cdiv(p1, 256), 256>>>((int*)in, p1, p2); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      histogram<<<cdiv(p1, bx), b>>>((const int*)in, (int*)out, p1);
    }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    if (!strcmp(k, "histogram")) {  // check: every element counted once
      int* h = (int*)malloc(bout); CK(cudaMemcpy(h, out, bout, cudaMemcpyDeviceToHost));
      long s = 0; for (int j = 0; j < p2; j++) s += h[j];
      if (s != p1) { printf("histogram sum %ld != n %d\n", s, p1); return 1; }
      free(h);
    }
    CK(cudaFree(in)); CK(cudaFree(out));
    printf("%d %s", id++, line);
  }
}
