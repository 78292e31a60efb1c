// L1 wavefront rules: for each access pattern one kernel launch, read with ncu's L1TEX counters
// (requests, sectors, lookup hits/misses, data-stage wavefronts, output wavefronts, bank conflicts)
// and the executed global-load instruction count.
// Every warp executes the same load instruction `reps` times on its own 16 KiB region (regions
// 16 KiB aligned, after an offset of offset_bytes). Lane l reads element
//     (l % width) * stride + (l / width) * pitch
// of type T (float, double, float2, float4, double2), so width 32 / pitch 0 is a plain strided
// access (stride 0: all lanes the same address), width 8 / pitch 264 doubles the 8x4 points of a
// 2-D array a warp of an 8-wide block covers (pitch 264 = 256 + 2x4 halo, as in stencils.cu).
// reps = 1: one cold load per warp (ncu flushes the caches before every launch, so it misses L1;
// row warm = 0). reps = 9: the cold load, then 8 more of the same addresses, each issued only after
// the previous one's data arrived (the next address depends on the loaded value), so they hit L1
// (row warm = 1). Per-instruction warm counts = (row warm=1 - row warm=0) / 8 / warps.
// Each pattern runs with one warp (1 block of 32 threads) and with a full grid (2 blocks of 128
// threads per SM: 8 warps per SM, 128 KiB of regions per SM at most).
// The loaded values are summed and stored only if the sum is an impossible value: no stores run.
//
//   l1_wavefronts RUNS.csv      (QUICK=1: a few patterns)
#include <string>
#include "micro.cuh"

__device__ __forceinline__ double vsum(float v) { return v; }
__device__ __forceinline__ double vsum(double v) { return v; }
__device__ __forceinline__ double vsum(float2 v) { return (double)v.x + v.y; }
__device__ __forceinline__ double vsum(float4 v) { return (double)v.x + v.y + v.z + v.w; }
__device__ __forceinline__ double vsum(double2 v) { return v.x + v.y; }

template <typename T>
__global__ void wf_load(const T* __restrict__ a, T* __restrict__ sink, long region_bytes, int offset_bytes, int width, int stride,
                        int pitch, int reps) {
  const int lane = threadIdx.x & 31;
  const long warp = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5;
  const T* base = (const T*)((const char*)a + warp * region_bytes + offset_bytes);
  const T* p = base + ((long)(lane % width) * stride + (long)(lane / width) * pitch);
  T v = p[0];
  double acc = vsum(v);
#pragma unroll 1
  for (int r = 1; r < reps; r++) {
    const int d = vsum(v) == 12345.0 ? 1 : 0;  // never 1, but the compiler cannot know: a data dependency
    __syncwarp();
    v = p[d];
    acc += vsum(v);
  }
  if (acc == 12345.0) sink[warp * 32 + lane] = v;
}

__global__ void fill_f(float* a, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) a[i] = 1.0f + (float)(i % 100) * 0.01f;
}

struct Pat { std::string name; int elem, vec; int width, stride, pitch, offset; };

template <typename T>
static void launch(const Pat& p, const void* a, void* sink, long region, int blocks, int threads, int reps) {
  wf_load<T><<<blocks, threads>>>((const T*)a, (T*)sink, region, p.offset, p.width, p.stride, p.pitch, reps);
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s RUNS.csv\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  print_device(stdout);
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  const int nsm = pr.multiProcessorCount;
  const long region = 16384;
  const int gblocks = 2 * nsm, gthreads = 128;
  const long nwarps_max = (long)gblocks * gthreads / 32;
  const long bytes = nwarps_max * region + 4096;
  void *a, *sink;
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&sink, nwarps_max * 32 * 16));
  fill_f<<<1024, 256>>>((float*)a, bytes / 4);
  CK(cudaDeviceSynchronize());

  std::vector<Pat> pats;
  for (int s : {1, 2, 4, 8, 16, 32}) pats.push_back({"f32_stride", 4, 4, 32, s, 0, 0});
  for (int s : {1, 2, 4, 8, 16, 32}) pats.push_back({"f64_stride", 8, 8, 32, s, 0, 0});
  for (int o : {4, 8, 16, 64}) pats.push_back({"f32_offset", 4, 4, 32, 1, 0, o});
  for (int o : {8, 16, 64}) pats.push_back({"f64_offset", 8, 8, 32, 1, 0, o});
  for (int s : {1, 2}) {
    pats.push_back({"f32x2_stride", 4, 8, 32, s, 0, 0});
    pats.push_back({"f32x4_stride", 4, 16, 32, s, 0, 0});
    pats.push_back({"f64x2_stride", 8, 16, 32, s, 0, 0});
  }
  pats.push_back({"f32_broadcast", 4, 4, 32, 0, 0, 0});
  pats.push_back({"f64_broadcast", 8, 8, 32, 0, 0, 0});
  pats.push_back({"f32x4_broadcast", 4, 16, 32, 0, 0, 0});
  for (int w : {8, 16, 32})
    for (int x0 : {0, 3, 4, 5}) pats.push_back({"f64_2d_" + std::to_string(w) + "x" + std::to_string(32 / w), 8, 8, w, 1, 264, 8 * x0});
  if (quick()) pats = {pats[0], pats[6], pats.back()};

  fprintf(f, "kernel,pattern,element_bytes,vector_bytes,stride_elems,width_lanes,pitch_elems,offset_bytes,warm,reps,warps,instructions\n");
  for (auto& p : pats)
    for (int grid = 0; grid < 2; grid++)
      for (int warm = 0; warm < 2; warm++) {
        int reps = warm ? 9 : 1;
        int blocks = grid ? gblocks : 1, threads = grid ? gthreads : 32;
        long warps = (long)blocks * threads / 32;
        if (p.vec == 4 && p.elem == 4) launch<float>(p, a, sink, region, blocks, threads, reps);
        else if (p.vec == 8 && p.elem == 8) launch<double>(p, a, sink, region, blocks, threads, reps);
        else if (p.vec == 8) launch<float2>(p, a, sink, region, blocks, threads, reps);
        else if (p.elem == 4) launch<float4>(p, a, sink, region, blocks, threads, reps);
        else launch<double2>(p, a, sink, region, blocks, threads, reps);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        fprintf(f, "wf_load,%s,%d,%d,%d,%d,%d,%d,%d,%d,%ld,%ld\n", p.name.c_str(), p.elem, p.vec, p.stride, p.width, p.pitch, p.offset,
                warm, reps, warps, warps * reps);
        fflush(f);
      }
  fclose(f);
  printf("l1_wavefronts: %zu patterns\n", pats.size());
  return 0;
}
