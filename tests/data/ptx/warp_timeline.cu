// Warp timelines of the stencils (issue 13, item 1): when does each warp of a block start and end?
//
// The kernels are stencils.cu's star<R>, plus two clock64 reads per warp: lane 0 writes the SM, the
// hardware warp slot, the block and its warp index and the clock before the first load, and the clock
// after the store. Both are written at once, so no register lives across the stencil (star4 uses 32,
// the most that keeps two 1024-thread blocks per SM; warp_timeline.sh checks the registers, the load
// runs and the L2 reads against the plain kernel). What it tells apart, per block:
//   round robin over all resident warps: every warp starts within a few hundred cycles of its block
//   and ends near the block's end;
//   only the oldest K warps issue: the warps past the K-th wait and start late;
//   greedy-then-oldest: warps start and end staggered in age order over the block's life.
// Output (stdout): one row per warp of the blocks that ran on SMs 0..LOG_SMS-1:
//   launch,sm,hw_warp,block,warp,t_start,t_end
//
//   nvcc -O3 -arch=sm_90 -o warp_timeline warp_timeline.cu
//   ./warp_timeline star4 640 512 512 1 16 64 [star1 256 256 256 1 16 64 ...] > warp_timeline.csv
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#define P 4
#define LOG_SMS 4
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned hw_warp() { unsigned r; asm volatile("mov.u32 %0, %%warpid;" : "=r"(r)); return r; }
__device__ __forceinline__ long long clk() { long long r; asm volatile("mov.u64 %0, %%clock64;" : "=l"(r) :: "memory"); return r; }

__device__ __forceinline__ long long* warp_log(long long* log) {
  long block = blockIdx.x + (long)gridDim.x * (blockIdx.y + (long)gridDim.y * blockIdx.z);
  int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  int warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
  return log + 6 * (block * warps + t / 32);
}

// __launch_bounds__(1024, 2): at most 32 registers, as the plain star4 (without it the log's
// index arithmetic takes 40, which halves the occupancy of 1024-thread blocks).
template <int R>
__global__ void __launch_bounds__(1024, 2) star(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz, int pitch, long plane, long long* log) {
  int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  if (t % 32 == 0) {
    long long* w = warp_log(log);
    w[0] = smid(); w[1] = hw_warp(); w[2] = clk();
  }
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
  if (t % 32 == 0) warp_log(log)[3] = clk();
}

__global__ void fill(double* a, long n, double v) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) a[i] = v;
}

static int cdiv(int a, int b) { return (a + b - 1) / b; }

int main(int argc, char** argv) {
  if (argc < 8 || (argc - 1) % 7) { fprintf(stderr, "usage: %s KERNEL NX NY NZ BX BY BZ [...]\n", argv[0]); return 2; }
  long maxn = 0, maxlog = 0;
  for (int a = 1; a < argc; a += 7) {
    int nx = atoi(argv[a + 1]), ny = atoi(argv[a + 2]), nz = atoi(argv[a + 3]);
    int bx = atoi(argv[a + 4]), by = atoi(argv[a + 5]), bz = atoi(argv[a + 6]);
    long n = (long)(nx + 2 * P) * (ny + 2 * P) * (nz + 2 * P);
    long warps = (long)cdiv(nx, bx) * cdiv(ny, by) * cdiv(nz, bz) * ((bx * by * bz + 31) / 32);
    if (n > maxn) maxn = n;
    if (warps > maxlog) maxlog = warps;
  }
  double *in, *out; long long *dlog;
  CK(cudaMalloc(&in, maxn * 8)); CK(cudaMalloc(&out, maxn * 8)); CK(cudaMalloc(&dlog, maxlog * 6 * 8));
  fill<<<4096, 256>>>(in, maxn, 1.0);
  fill<<<4096, 256>>>(out, maxn, 0.0);
  CK(cudaDeviceSynchronize());
  std::vector<long long> hlog(maxlog * 6);
  printf("launch,sm,hw_warp,block,warp,t_start,t_end\n");
  for (int a = 1, id = 0; a < argc; a += 7, id++) {
    const char* k = argv[a];
    int nx = atoi(argv[a + 1]), ny = atoi(argv[a + 2]), nz = atoi(argv[a + 3]);
    int bx = atoi(argv[a + 4]), by = atoi(argv[a + 5]), bz = atoi(argv[a + 6]);
    int pitch = nx + 2 * P; long plane = (long)pitch * (ny + 2 * P);
    dim3 b(bx, by, bz), g(cdiv(nx, bx), cdiv(ny, by), cdiv(nz, bz));
    int wpb = (bx * by * bz + 31) / 32;
    long nwarps = (long)g.x * g.y * g.z * wpb;
    for (int rep = 0; rep < 2; rep++) { // the first launch warms clocks and TLBs; the second is logged
      CK(cudaMemset(dlog, 0, nwarps * 6 * 8));
      if (!strcmp(k, "star1")) star<1><<<g, b>>>(in, out, nx, ny, nz, pitch, plane, dlog);
      else if (!strcmp(k, "star4")) star<4><<<g, b>>>(in, out, nx, ny, nz, pitch, plane, dlog);
      else { fprintf(stderr, "unknown kernel %s\n", k); return 2; }
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
    }
    CK(cudaMemcpy(hlog.data(), dlog, nwarps * 6 * 8, cudaMemcpyDeviceToHost));
    for (long w = 0; w < nwarps; w++) {
      long long* r = &hlog[6 * w];
      if (r[0] >= LOG_SMS) continue;
      printf("%d,%lld,%lld,%ld,%ld,%lld,%lld\n", id, r[0], r[1], w / wpb, w % wpb, r[2], r[3]);
    }
    fprintf(stderr, "launch %d: %s %dx%dx%d block %dx%dx%d\n", id, k, nx, ny, nz, bx, by, bz);
  }
  return 0;
}
