// The D3Q19 lattice-Boltzmann step of validation/families.cu taken apart (issue 53: predicted
// 16-31% too fast on every shape, and measured slower the narrower its blocks): the same 19 + 19
// streams of doubles in the same layout ((nx+2)(ny+2)(nz+2) cells per population, interior cells
// only), with less of the kernel each time:
//   lbm_full        the step itself (72 registers)
//   lbm_pull        the pull's loads (each population from its upwind neighbour) stored as they
//                   came: the same addresses, hardly any arithmetic, 48 registers
//   lbm_same        each population loaded from and stored to the cell itself: no neighbours
//   lbm_pull_s13    lbm_pull holding 13 KiB of shared memory a block (16 blocks an SM at most,
//                   with the 1 KiB the driver reserves a block, of 228 KiB)
//   lbm_pull_s27    the same with 27 KiB (8 blocks an SM at most)
//   lbm_layout      lbm_same over a layout of its own: rows `pitch` doubles apart, the row's
//                   cells from `xoff`, populations `cells` doubles apart (lbm_same is pitch nx+2,
//                   xoff 1, cells (nx+2)(ny+2)(nz+2)): is it the rows' alignment, the sectors the
//                   rows leave partly written, or the populations' spacing?
//   lbm_shift       lbm_layout with the loads `lshift` and the stores `sshift` doubles past the
//                   cell (rows `pitch` apart, populations `cells` apart): which of the two a
//                   warp's access straddling sectors or lines costs
// Each config line: kernel nx ny nz bx by bz [pitch xoff cells [sshift]] (lbm_layout's and
// lbm_shift's; lbm_shift's xoff is lshift). Every launch gets freshly cudaMalloc'd arrays set to
// a fluid at rest (freed after it), so ncu's ID i is the i-th config line. Prints "ID line".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
static int cdiv(int a, int b) { return (a + b - 1) / b; }

#include "lbm_d3q19.cuh"

__global__ void lbm_full(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz, double omega) {
  lbm_d3q19_step(f, g, nx, ny, nz, omega);
}

// The pull's loads, all issued before the first store as in lbm_full (every store waits for
// their sum), stored unchanged (plus PAD, the shared-memory variants' zero).
#define PULL_BODY(SHIFT, PAD)                                                                \
  D3Q19_VELOCITIES                                                                        \
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;                                      \
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;                                      \
  int z = blockIdx.z * blockDim.z + threadIdx.z + 1;                                      \
  if (x > nx || y > ny || z > nz) return;                                                 \
  int pitch = nx + 2;                                                                     \
  int plane = pitch * (ny + 2);                                                           \
  int cells = plane * (nz + 2);                                                           \
  int c = z * plane + y * pitch + x;                                                      \
  double fq[Q];                                                                           \
  _Pragma("unroll") for (int q = 0; q < Q; q++)                                           \
    fq[q] = f[q * cells + c - (SHIFT) * (cz[q] * plane + cy[q] * pitch + cx[q])];         \
  double s = 0.0;                                                                         \
  _Pragma("unroll") for (int q = 0; q < Q; q++) s += fq[q];                               \
  _Pragma("unroll") for (int q = 0; q < Q; q++) g[q * cells + c] = fq[q] + 0.0 * s + (PAD);

__global__ void lbm_pull(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz) {
  PULL_BODY(1, 0.0)
}

__global__ void lbm_same(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz) {
  PULL_BODY(0, 0.0)
}

// DOUBLES doubles of shared memory a block, kept (every store adds `p`, their zero). The kernels
// below are written out, not made by a macro, so that the lifter finds their parameters' names.
#define SMEM_PAD(DOUBLES)             \
  __shared__ double pad[DOUBLES];     \
  pad[threadIdx.x] = 0.0;             \
  __syncthreads();                    \
  double p = pad[threadIdx.x];

__global__ void lbm_pull_s13(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz) {
  SMEM_PAD(1664)
  PULL_BODY(1, p)
}

__global__ void lbm_pull_s27(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz) {
  SMEM_PAD(3456)
  PULL_BODY(1, p)
}

__global__ void lbm_layout(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz,
                           int pitch, int xoff, int cells) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  int z = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (x >= nx || y > ny || z > nz) return;
  int plane = pitch * (ny + 2);
  int c = z * plane + y * pitch + x + xoff;
  double fq[Q];
#pragma unroll
  for (int q = 0; q < Q; q++) fq[q] = f[q * cells + c];
  double s = 0.0;
#pragma unroll
  for (int q = 0; q < Q; q++) s += fq[q];
#pragma unroll
  for (int q = 0; q < Q; q++) g[q * cells + c] = fq[q] + 0.0 * s;
}

__global__ void lbm_shift(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz,
                          int pitch, int lshift, int cells, int sshift) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  int z = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (x >= nx || y > ny || z > nz) return;
  int plane = pitch * (ny + 2);
  int c = z * plane + y * pitch + x;
  double fq[Q];
#pragma unroll
  for (int q = 0; q < Q; q++) fq[q] = f[q * cells + c + lshift];
  double s = 0.0;
#pragma unroll
  for (int q = 0; q < Q; q++) s += fq[q];
#pragma unroll
  for (int q = 0; q < Q; q++) g[q * cells + c + sshift] = fq[q] + 0.0 * s;
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: lbm_parts LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r"); if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int nx, ny, nz, bx, by, bz, pitch = 0, xoff = 0, lcells = 0, sshift = 0;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %d %d %d %d %d %d %d %d", k, &nx, &ny, &nz, &bx, &by, &bz, &pitch, &xoff, &lcells, &sshift) < 7) continue;
    size_t cells = lcells ? (size_t)lcells : (size_t)(nx + 2) * (ny + 2) * (nz + 2);
    double *f, *g;
    CK(cudaMalloc(&f, Q * cells * 8)); CK(cudaMalloc(&g, Q * cells * 8));
    CK(cudaMemset(g, 0, Q * cells * 8));
    CK(lbm_fluid_at_rest(f, cells));
    dim3 grid(cdiv(nx, bx), cdiv(ny, by), cdiv(nz, bz)), b(bx, by, bz);
    if (!strcmp(k, "lbm_full")) lbm_full<<<grid, b>>>(f, g, nx, ny, nz, 1.7);
    else if (!strcmp(k, "lbm_pull")) lbm_pull<<<grid, b>>>(f, g, nx, ny, nz);
    else if (!strcmp(k, "lbm_same")) lbm_same<<<grid, b>>>(f, g, nx, ny, nz);
    else if (!strcmp(k, "lbm_pull_s13")) lbm_pull_s13<<<grid, b>>>(f, g, nx, ny, nz);
    else if (!strcmp(k, "lbm_pull_s27")) lbm_pull_s27<<<grid, b>>>(f, g, nx, ny, nz);
    else if (!strcmp(k, "lbm_layout")) lbm_layout<<<grid, b>>>(f, g, nx, ny, nz, pitch, xoff, lcells);
    else if (!strcmp(k, "lbm_shift")) lbm_shift<<<grid, b>>>(f, g, nx, ny, nz, pitch, xoff, lcells, sshift);
    else { printf("unknown kernel %s\n", k); return 1; }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(f)); CK(cudaFree(g));
    printf("%d %s", id++, line);
  }
  return 0;
}
