// L1 data-stage wavefronts of streaming stencil-like kernels under load, and what a warp costs at
// launch. Complements l1_wavefronts.cu / l1_store_wavefronts.cu (isolated warps, repeated hits).
// Each config line: kernel nx ny nz bx by bz pitch offset (doubles on a (nz+8) x (ny+8) x pitch
// layout, element x + offset of row y + 4, plane z + 4). Kernels: copy, load (load only), store,
// none (3-D index and guard, no memory access), star1 / star1ld (7-point star with / without its
// store), ld7 (7 loads of independent streams), none1/none2/none3 (read blockIdx.x / x,y / x,y,z),
// empty1/empty3 (read nothing), big1 (16 int parameters, blockIdx.x).
// Read with ncu (validation/wavefront_probe.sh); data in tests/data/h100/micro/wavefront_probe/.
// Findings (docs/model.md, "L1 data stage"): every launched warp costs one shared-memory
// wavefront per blockIdx component the kernel reads (0 for an empty kernel, 3 for x, y, z), idle
// guarded-off warps included; stores cost the bank rule exactly; loads that miss cost more passes
// under load than on an idle SM (about 0.2-0.6 per missing line, depending on load).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
#define IDX \
  int x = blockIdx.x * blockDim.x + threadIdx.x; int y = blockIdx.y * blockDim.y + threadIdx.y; \
  int z = blockIdx.z * blockDim.z + threadIdx.z; if (x >= nx || y >= ny || z >= nz) return; \
  long c = (long)(z + 4) * plane + (long)(y + 4) * pitch + (x + off);
__global__ void k_copy(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, int off) { IDX out[c] = in[c]; }
__global__ void k_load(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, int off) { IDX double v = in[c]; if (v == -12345.0) out[c] = v; }
__global__ void k_store(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, int off) { IDX out[c] = 1.0; }
__global__ void k_none(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, int off) { IDX if (c == -7) out[0] = 1.0; }
__global__ void k_star1(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, int off) {
  IDX out[c] = 0.25 * in[c] + 0.125 * (in[c - 1] + in[c + 1] + in[c - pitch] + in[c + pitch] + in[c - plane] + in[c + plane]); }
__global__ void k_star1_ld(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, int off) {
  IDX double v = 0.25 * in[c] + 0.125 * (in[c - 1] + in[c + 1] + in[c - pitch] + in[c + pitch] + in[c - plane] + in[c + plane]); if (v == -12345.0) out[c] = v; }
__global__ void k_ld7same(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, int off) {
  IDX double v = 0; 
  #pragma unroll
  for (int i = 0; i < 7; i++) v += in[c + (long)i * 64 * plane];  // 7 distinct streams, all aligned like in[c]
  if (v == -12345.0) out[c] = v; }
__global__ void k_none1(double* out, int nx) { int x = blockIdx.x * blockDim.x + threadIdx.x; if (x == -7) out[0] = 1.0; }
__global__ void k_none2(double* out, int nx) { int x = blockIdx.x * blockDim.x + threadIdx.x; int y = blockIdx.y * blockDim.y + threadIdx.y; if (x + y == -7) out[0] = 1.0; }
__global__ void k_none3(double* out, int nx) { int x = blockIdx.x * blockDim.x + threadIdx.x; int y = blockIdx.y * blockDim.y + threadIdx.y; int z = blockIdx.z * blockDim.z + threadIdx.z; if (x + y + z == -7) out[0] = 1.0; }
__global__ void k_empty() { }
__global__ void k_big(double* out, int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9, int a10, int a11, int a12, int a13, int a14, int a15) { int x = blockIdx.x * blockDim.x + threadIdx.x; if (x + a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 + a14 + a15 == -7) out[0] = 1.0; }
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "r"); char line[256];
  long n = 600L * 600 * 600; double *in, *out;
  CK(cudaMalloc(&in, n * 8)); CK(cudaMalloc(&out, n * 8)); CK(cudaMemset(in, 0, n * 8)); CK(cudaMemset(out, 0, n * 8));
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[32]; int nx, ny, nz, bx, by, bz, pitch, off;
    if (sscanf(line, "%31s %d %d %d %d %d %d %d %d", k, &nx, &ny, &nz, &bx, &by, &bz, &pitch, &off) < 9) continue;
    long plane = (long)pitch * (ny + 8);
    dim3 b(bx, by, bz), g((nx + bx - 1) / bx, (ny + by - 1) / by, (nz + bz - 1) / bz);
    if (!strcmp(k, "copy")) k_copy<<<g, b>>>(in, out, nx, ny, nz, pitch, plane, off);
    if (!strcmp(k, "load")) k_load<<<g, b>>>(in, out, nx, ny, nz, pitch, plane, off);
    if (!strcmp(k, "store")) k_store<<<g, b>>>(in, out, nx, ny, nz, pitch, plane, off);
    if (!strcmp(k, "none")) k_none<<<g, b>>>(in, out, nx, ny, nz, pitch, plane, off);
    if (!strcmp(k, "star1")) k_star1<<<g, b>>>(in, out, nx, ny, nz, pitch, plane, off);
    if (!strcmp(k, "star1ld")) k_star1_ld<<<g, b>>>(in, out, nx, ny, nz, pitch, plane, off);
    if (!strcmp(k, "ld7")) k_ld7same<<<g, b>>>(in, out, nx, ny, nz, pitch, plane, off);
    dim3 g1(nx * ny * nz / (bx * by * bz)), g2(nx / bx, ny * nz / (by * bz));
    if (!strcmp(k, "none1")) k_none1<<<g1, b>>>(out, nx);
    if (!strcmp(k, "none2")) k_none2<<<g2, b>>>(out, nx);
    if (!strcmp(k, "none3")) k_none3<<<g, b>>>(out, nx);
    if (!strcmp(k, "empty1")) k_empty<<<g1, b>>>();
    if (!strcmp(k, "empty3")) k_empty<<<g, b>>>();
    if (!strcmp(k, "big1")) k_big<<<g1, b>>>(out, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
}
