// Kernels whose instructions, not their bytes, may set the pace (issue 53: register-bound and
// instruction-heavy kernel classes). An SM issues at most one warp instruction per cycle on each
// of its four schedulers; the dev set's double stencils issue at 50-66 % of that (measured
// smsp__inst_executed.sum), so the same stencils on floats (half the bytes, about the same
// instructions) should run at the issue rate, which the time model does not see.
//   star4f, box27f   the dev set's star<4> and box27 (../shared/measurements/h200/stencils.cu) on
//                    floats: arrays padded by 4 points on every side, x fastest, one point a thread
//   poly<N>          y[i] = a polynomial of degree N in x[i] (Horner: N dependent FMAs), floats,
//                    one element a thread: N sets the instructions per byte
//   fma_ilp<N>       no loads: 4 independent chains of N FMAs a thread, one store: the issue rate
//                    itself (instructions per SM cycle)
// Lifted by the simulator from this file (entry = kernel name; tests/data/h200/issue_bound/
// manifest.toml).
//   issue_bound LAUNCHES   (lines "kernel nx ny nz bx by bz"; poly and fma_ilp: "poly_N n 1 1 b 1 1";
//                           prints "ID line" per launch)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define P 4
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

__global__ void star4f(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, int pitch, long plane) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long c = (long)(z + P) * plane + (long)(y + P) * pitch + (x + P);
  float s = 0.5f * in[c];
#pragma unroll
  for (int r = 1; r <= 4; r++)
    s += 0.1f * (in[c - r] + in[c + r] + in[c - r * pitch] + in[c + r * pitch] + in[c - r * plane] + in[c + r * plane]);
  out[c] = s;
}

__global__ void box27f(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, int pitch, long plane) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long c = (long)(z + P) * plane + (long)(y + P) * pitch + (x + P);
  float s = 0.0f;
#pragma unroll
  for (int dz = -1; dz <= 1; dz++)
#pragma unroll
    for (int dy = -1; dy <= 1; dy++)
#pragma unroll
      for (int dx = -1; dx <= 1; dx++) s += 0.03f * in[c + dz * plane + dy * pitch + dx];
  out[c] = s;
}

template <int N>
__global__ void poly(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i], s = 1.0f;
#pragma unroll
  for (int k = 0; k < N; k++) s = s * x + 0.5f;
  out[i] = s;
}

template <int N>
__global__ void fma_ilp(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = 1.0f + i * 1e-9f, a = x, b = x + 1.0f, c = x + 2.0f, d = x + 3.0f;
#pragma unroll
  for (int k = 0; k < N; k++) {
    a = a * x + 0.5f; b = b * x + 0.25f; c = c * x + 0.125f; d = d * x + 0.0625f;
  }
  out[i] = a + b + c + d;
}

typedef void (*Stencil)(const float*, float*, int, int, int, int, long);
typedef void (*Stream)(const float*, float*, int);
struct StreamEntry { const char* name; Stream fn; };
static const StreamEntry streams[] = {
    {"poly_8", poly<8>}, {"poly_32", poly<32>}, {"poly_128", poly<128>},
    {"fma_ilp_64", fma_ilp<64>}, {"fma_ilp_256", fma_ilp<256>}};

static int cdiv(int a, int b) { return (a + b - 1) / b; }

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: issue_bound LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int nx, ny, nz, bx, by, bz;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %d %d %d %d", k, &nx, &ny, &nz, &bx, &by, &bz) < 7) continue;
    Stencil st = !strcmp(k, "star4f") ? star4f : !strcmp(k, "box27f") ? box27f : 0;
    Stream sm = 0;
    for (const StreamEntry& e : streams) if (!strcmp(e.name, k)) sm = e.fn;
    if (!st && !sm) { printf("unknown kernel %s\n", k); return 1; }
    int pitch = nx + 2 * P; long plane = (long)pitch * (ny + 2 * P);
    size_t elems = st ? (size_t)plane * (nz + 2 * P) : (size_t)nx;
    float *a, *b;
    CK(cudaMalloc(&a, elems * sizeof(float))); CK(cudaMalloc(&b, elems * sizeof(float)));
    CK(cudaMemset(a, 0, elems * sizeof(float))); CK(cudaMemset(b, 0, elems * sizeof(float)));
    dim3 blk(bx, by, bz);
    if (st) st<<<dim3(cdiv(nx, bx), cdiv(ny, by), cdiv(nz, bz)), blk>>>(a, b, nx, ny, nz, pitch, plane);
    else sm<<<cdiv(nx, bx), bx>>>(a, b, nx);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(a)); CK(cudaFree(b));
    printf("%d %s", id++, line);
  }
  return 0;
}
