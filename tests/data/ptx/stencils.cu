// Ground-truth stencil kernels for validating the cache simulator against Nsight Compute counters.
// Layout (all kernels): double arrays padded by P=4 points on every side, x fastest.
//   pitch = nx + 2P, plane = pitch * (ny + 2P); point (x,y,z) lives at (z+P)*plane + (y+P)*pitch + (x+P).
// Base pointers come from cudaMalloc (256-byte aligned); in and out are separate allocations.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define P 4
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

// star stencil of radius R, one point per thread, 3D blocks
template <int R>
__global__ void star(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long c = (long)(z + P) * plane + (long)(y + P) * pitch + (x + P);
  double s = 0.5 * in[c];
#pragma unroll
  for (int r = 1; r <= R; r++)
    s += 0.1 * (in[c - r] + in[c + r] + in[c - r * pitch] + in[c + r * pitch] + in[c - r * plane] + in[c + r * plane]);
  out[c] = s;
}

// 27-point box stencil, one point per thread, 3D blocks
__global__ void box27(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long c = (long)(z + P) * plane + (long)(y + P) * pitch + (x + P);
  double s = 0.0;
#pragma unroll
  for (int dz = -1; dz <= 1; dz++)
#pragma unroll
    for (int dy = -1; dy <= 1; dy++)
#pragma unroll
      for (int dx = -1; dx <= 1; dx++) s += 0.03 * in[c + dz * plane + dy * pitch + dx];
  out[c] = s;
}

// 7-point star, 2D blocks, each thread walks cz consecutive z points (register rotation of z neighbours):
// per z step it loads in[c+plane] and the 4 in-plane neighbours; before the loop in[c-plane] and in[c].
__global__ void star1_zloop(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, int cz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z0 = blockIdx.z * cz;
  if (x >= nx || y >= ny) return;
  long c = (long)(z0 + P) * plane + (long)(y + P) * pitch + (x + P);
  double dn = in[c - plane], cu = in[c];
  for (int k = 0; k < cz && z0 + k < nz; k++) {
    double up = in[c + plane];
    out[c] = 0.5 * cu + 0.1 * (in[c - 1] + in[c + 1] + in[c - pitch] + in[c + pitch] + dn + up);
    dn = cu; cu = up; c += plane;
  }
}

// streaming copy on the same layout
__global__ void copy(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long c = (long)(z + P) * plane + (long)(y + P) * pitch + (x + P);
  out[c] = in[c];
}

__global__ void fill(double* a, long n, double v) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  for (; i < n; i += (long)gridDim.x * blockDim.x) a[i] = v + (i % 7) * 0.25;
}

static int cdiv(int a, int b) { return (a + b - 1) / b; }

// config file lines: kernel nx ny nz bx by bz [cz]
int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s configs.txt\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "r");
  if (!f) { perror("configs"); return 2; }
  long maxn = 0;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    char k[32]; int nx, ny, nz, bx, by, bz, cz = 1;
    if (sscanf(line, "%31s %d %d %d %d %d %d %d", k, &nx, &ny, &nz, &bx, &by, &bz, &cz) < 7) continue;
    long n = (long)(nx + 2 * P) * (ny + 2 * P) * (nz + 2 * P);
    if (n > maxn) maxn = n;
  }
  rewind(f);
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  printf("# device %s sms=%d l2=%d persistingL2max=%d smem/sm=%zu regs/sm=%d maxthr/sm=%d maxblk/sm=%d buswidth=%d\n", pr.name, pr.multiProcessorCount, pr.l2CacheSize, pr.persistingL2CacheMaxSize, pr.sharedMemPerMultiprocessor, pr.regsPerMultiprocessor, pr.maxThreadsPerMultiProcessor, pr.maxBlocksPerMultiProcessor, pr.memoryBusWidth);
  double *in, *out;
  // PAD_MB (default 0): allocate that much first, so that the arrays get other physical pages (the
  // L2's sets and home partitions follow physical addresses: validation/placement_spread.sh).
  if (const char* pad = getenv("PAD_MB")) {
    void* p = nullptr;
    if (atol(pad) > 0) CK(cudaMalloc(&p, (size_t)atol(pad) << 20));
    printf("# pad=%s MiB\n", pad);
  }
  CK(cudaMalloc(&in, maxn * sizeof(double)));
  CK(cudaMalloc(&out, maxn * sizeof(double)));
  fill<<<4096, 256>>>(in, maxn, 1.0);
  fill<<<4096, 256>>>(out, maxn, 0.0);
  CK(cudaDeviceSynchronize());
  printf("# in=%p out=%p (mod 4096: %ld %ld)\n", (void*)in, (void*)out, (long)((size_t)in % 4096), (long)((size_t)out % 4096));
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[32]; int nx, ny, nz, bx, by, bz, cz = 1;
    int got = sscanf(line, "%31s %d %d %d %d %d %d %d", k, &nx, &ny, &nz, &bx, &by, &bz, &cz);
    if (got < 7) continue;
    int pitch = nx + 2 * P; long plane = (long)pitch * (ny + 2 * P);
    dim3 b(bx, by, bz);
    if (!strcmp(k, "star1_zloop")) {
      dim3 g(cdiv(nx, bx), cdiv(ny, by), cdiv(nz, cz));
      star1_zloop<<<g, b>>>(in, out, nx, ny, nz, pitch, plane, cz);
    } else {
      dim3 g(cdiv(nx, bx), cdiv(ny, by), cdiv(nz, bz));
      if (!strcmp(k, "star1")) star<1><<<g, b>>>(in, out, nx, ny, nz, pitch, plane);
      else if (!strcmp(k, "star4")) star<4><<<g, b>>>(in, out, nx, ny, nz, pitch, plane);
      else if (!strcmp(k, "box27")) box27<<<g, b>>>(in, out, nx, ny, nz, pitch, plane);
      else if (!strcmp(k, "copy")) copy<<<g, b>>>(in, out, nx, ny, nz, pitch, plane);
      else { fprintf(stderr, "unknown kernel %s\n", k); return 2; }
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    printf("%d %s %d %d %d %d %d %d %d\n", id++, k, nx, ny, nz, bx, by, bz, cz);
  }
  return 0;
}
