// L1 data-stage cost of global stores: for each store pattern one kernel launch, read with ncu's
// L1TEX counters (store sectors, data-stage wavefronts in total and of writes). The complement
// of l1_wavefronts.cu, which measures loads and runs no stores.
// Every warp stores `reps` times to its own 16 KiB region (16 KiB aligned, after offset_bytes).
// Lane l writes element (l % width) * stride + (l / width) * pitch of type T (float, double,
// float2, float4, double2). `preload` = 1 first loads the same addresses (so the lines are in L1
// when the store arrives; L1 is write-through: does a store to a present line cost more?).
// Each pattern runs with one warp (1 block of 32 threads) and a full grid (2 blocks of 128
// threads per SM). Per store instruction = (counter - the one-warp baseline kernel's) / stores.
//
//   l1_store_wavefronts RUNS.csv
#include <string>
#include "micro.cuh"

template <typename T> __device__ __forceinline__ T mk(float x);
template <> __device__ __forceinline__ float mk<float>(float x) { return x; }
template <> __device__ __forceinline__ double mk<double>(float x) { return x; }
template <> __device__ __forceinline__ float2 mk<float2>(float x) { return make_float2(x, x); }
template <> __device__ __forceinline__ float4 mk<float4>(float x) { return make_float4(x, x, x, x); }
template <> __device__ __forceinline__ double2 mk<double2>(float x) { return make_double2(x, x); }
__device__ __forceinline__ float first(float v) { return v; }
__device__ __forceinline__ float first(double v) { return (float)v; }
__device__ __forceinline__ float first(float2 v) { return v.x; }
__device__ __forceinline__ float first(float4 v) { return v.x; }
__device__ __forceinline__ float first(double2 v) { return (float)v.x; }

template <typename T>
__global__ void wf_store(T* __restrict__ a, long region_bytes, int offset_bytes, int width, int stride, int pitch, int reps,
                         int preload) {
  const int lane = threadIdx.x & 31;
  const long warp = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5;
  T* base = (T*)((char*)a + warp * region_bytes + offset_bytes);
  T* p = base + ((long)(lane % width) * stride + (long)(lane / width) * pitch);
  float x = (float)lane;
  if (preload) x += first(p[0]);
#pragma unroll 1
  for (int r = 0; r < reps; r++) {
    __syncwarp();
    p[0] = mk<T>(x + r);
  }
}

struct Pat { std::string name; int elem, vec; int width, stride, pitch, offset; };

template <typename T>
static void launch(const Pat& p, void* a, long region, int blocks, int threads, int reps, int preload) {
  wf_store<T><<<blocks, threads>>>((T*)a, region, p.offset, p.width, p.stride, p.pitch, reps, preload);
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
  const long bytes = (long)gblocks * gthreads / 32 * region + 4096;
  void* a;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMemset(a, 0, bytes));
  CK(cudaDeviceSynchronize());

  std::vector<Pat> pats;
  for (int s : {1, 2, 4, 8, 32}) pats.push_back({"f32_stride", 4, 4, 32, s, 0, 0});
  for (int s : {1, 2, 4, 8, 32}) pats.push_back({"f64_stride", 8, 8, 32, s, 0, 0});
  for (int o : {4, 32}) pats.push_back({"f32_offset", 4, 4, 32, 1, 0, o});
  for (int o : {8, 32, 64}) pats.push_back({"f64_offset", 8, 8, 32, 1, 0, o});
  pats.push_back({"f32x4_stride", 4, 16, 32, 1, 0, 0});
  pats.push_back({"f64x2_stride", 8, 16, 32, 1, 0, 0});
  for (int w : {1, 2, 4, 8, 16})
    for (int x0 : {0, 4}) pats.push_back({"f64_2d_" + std::to_string(w) + "x" + std::to_string(32 / w), 8, 8, w, 1, 264, 8 * x0});

  fprintf(f, "kernel,pattern,element_bytes,vector_bytes,stride_elems,width_lanes,pitch_elems,offset_bytes,preload,reps,warps,stores\n");
  for (auto& p : pats)
    for (int grid = 0; grid < 2; grid++)
      for (int preload = 0; preload < 2; preload++)
        for (int reps : {0, 1, 9}) {
          int blocks = grid ? gblocks : 1, threads = grid ? gthreads : 32;
          long warps = (long)blocks * threads / 32;
          if (p.vec == 4 && p.elem == 4) launch<float>(p, a, region, blocks, threads, reps, preload);
          else if (p.vec == 8 && p.elem == 8) launch<double>(p, a, region, blocks, threads, reps, preload);
          else if (p.vec == 8) launch<float2>(p, a, region, blocks, threads, reps, preload);
          else if (p.elem == 4) launch<float4>(p, a, region, blocks, threads, reps, preload);
          else launch<double2>(p, a, region, blocks, threads, reps, preload);
          CK(cudaGetLastError());
          CK(cudaDeviceSynchronize());
          fprintf(f, "wf_store,%s,%d,%d,%d,%d,%d,%d,%d,%d,%ld,%ld\n", p.name.c_str(), p.elem, p.vec, p.stride, p.width, p.pitch,
                  p.offset, preload, reps, warps, warps * reps);
          fflush(f);
        }
  fclose(f);
  printf("l1_store_wavefronts: %zu patterns\n", pats.size());
  return 0;
}
