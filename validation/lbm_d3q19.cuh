// The D3Q19 lattice-Boltzmann step (BGK, pull, SoA doubles: (nx+2)(ny+2)(nz+2) cells per
// population, the interior updated) and its fluid at rest, shared by validation/families.cu
// (lbm_d3q19) and validation/lbm_parts.cu (lbm_full), so that the step taken apart is the step
// the families measure.
#pragma once

#define Q 19
// D3Q19 velocities: rest, 6 faces, 12 edges; local arrays, so that unrolled loops fold them.
#define D3Q19_VELOCITIES                                                              \
  const int cx[Q] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0};   \
  const int cy[Q] = {0, 0, 0, 1, -1, 0, 0, 1, 1, -1, -1, 0, 0, 0, 0, 1, -1, 1, -1};   \
  const int cz[Q] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, 1, -1, -1, 1, 1, -1, -1};

__device__ __forceinline__ void lbm_d3q19_step(const double* __restrict__ f, double* __restrict__ g, int nx, int ny, int nz,
                                                double omega) {
  D3Q19_VELOCITIES
  const double w[Q] = {1. / 3, 1. / 18, 1. / 18, 1. / 18, 1. / 18, 1. / 18, 1. / 18,
                       1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36,
                       1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36};
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  int z = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (x > nx || y > ny || z > nz) return;
  int pitch = nx + 2;
  int plane = pitch * (ny + 2);
  int cells = plane * (nz + 2);
  int c = z * plane + y * pitch + x;
  double fq[Q];
  double rho = 0, ux = 0, uy = 0, uz = 0;
#pragma unroll
  for (int q = 0; q < Q; q++) {  // pull: the population that streams into c
    fq[q] = f[q * cells + c - cz[q] * plane - cy[q] * pitch - cx[q]];
    rho += fq[q];
    ux += cx[q] * fq[q];
    uy += cy[q] * fq[q];
    uz += cz[q] * fq[q];
  }
  ux /= rho; uy /= rho; uz /= rho;
  double usq = 1.5 * (ux * ux + uy * uy + uz * uz);
#pragma unroll
  for (int q = 0; q < Q; q++) {
    double cu = 3.0 * (cx[q] * ux + cy[q] * uy + cz[q] * uz);
    double feq = w[q] * rho * (1.0 + cu + 0.5 * cu * cu - usq);
    g[q * cells + c] = fq[q] + omega * (feq - fq[q]);
  }
}

// Sets every population of the (nx+2)(ny+2)(nz+2) = `cells` cells to a fluid at rest (f = w, so
// rho = 1 and no division by zero).
static cudaError_t lbm_fluid_at_rest(double* f, size_t cells) {
  const double h[Q] = {1. / 3, 1. / 18, 1. / 18, 1. / 18, 1. / 18, 1. / 18, 1. / 18, 1. / 36, 1. / 36, 1. / 36,
                       1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36, 1. / 36};
  double* tmp = (double*)malloc(cells * sizeof(double));
  cudaError_t e = cudaSuccess;
  for (int q = 0; q < Q && e == cudaSuccess; q++) {
    for (size_t i = 0; i < cells; i++) tmp[i] = h[q];
    e = cudaMemcpy(f + q * cells, tmp, cells * sizeof(double), cudaMemcpyHostToDevice);
  }
  free(tmp);
  return e;
}
