// Store (and load) throughput by pattern (issue 53, item 2): every warp instruction spreads its
// 32 lanes over L lines of 128 B, so each line gets 128/L bytes (4-byte lanes) or 512/L bytes
// (16-byte lanes, float4); consecutive warps fill each line completely, as a naive transpose's
// neighbouring warps do, so no sector is left partly written at the end. Measured by
// validation/store_patterns.sh with ncu: time, L2 requests and sectors from the L1, DRAM.
//   store_f32 L    out[...] = 1     L in 1, 2, 4, 8, 16, 32 (128 B .. 4 B per line)
//   store_f4 L     float4 lanes     L in 4, 8, 16, 32 (128 B .. 16 B per line)
//   load_f32 L     sum of in[...] over the same pattern, one coalesced store per thread
// Each config line: kernel L lines_total block_x. Prints "ID line" per launch.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)

// The float a lane writes: C = 32 / (lanes per line × floats per lane) consecutive warps share L
// lines, warp w filling chunk w % C of lines (w / C) * L .. + L - 1.
__device__ __forceinline__ long pattern_index(long t, int L, int floats_per_lane) {
  // Every count is a power of two: shifts and masks, so that the index arithmetic stays far
  // below the memory system's rate (64-bit divisions by a runtime L made the first version
  // instruction-bound).
  int log_l = __ffs(L) - 1, log_f = __ffs(floats_per_lane) - 1;
  int log_g = 5 - log_l;                        // lanes per line
  int log_chunks = 5 - log_g - log_f;           // warps that share a group of L lines
  long w = t >> 5;
  int lane = (int)(t & 31);
  long line = ((w >> log_chunks) << log_l) + (lane >> log_g);
  int chunk = (int)(w & ((1 << log_chunks) - 1));
  return (line << 5) + ((long)chunk << (log_g + log_f)) + ((lane & ((1 << log_g) - 1)) << log_f);
}

__global__ void store_f32(float* out, int L, long threads) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < threads) out[pattern_index(t, L, 1)] = 1.0f;
}

__global__ void store_f4(float* out, int L, long threads) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < threads) *(float4*)&out[pattern_index(t, L, 4)] = make_float4(1.f, 1.f, 1.f, 1.f);
}

__global__ void load_f32(const float* in, float* out, int L, long threads) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < threads) out[t] = in[pattern_index(t, L, 1)];
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: store_patterns LAUNCHES\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[32]; int L, bx; long lines;
    if (line[0] == '#' || sscanf(line, "%31s %d %ld %d", k, &L, &lines, &bx) < 4) continue;
    size_t bytes = (size_t)lines * 128;
    float *a = 0, *b = 0;
    CK(cudaMalloc(&a, bytes)); CK(cudaMemset(a, 0, bytes));
    long threads;
    if (!strcmp(k, "store_f32")) {
      threads = lines * 32;  // each float written once
      store_f32<<<(threads + bx - 1) / bx, bx>>>(a, L, threads);
    } else if (!strcmp(k, "store_f4")) {
      threads = lines * 8;
      store_f4<<<(threads + bx - 1) / bx, bx>>>(a, L, threads);
    } else if (!strcmp(k, "load_f32")) {
      threads = lines * 32;
      CK(cudaMalloc(&b, threads * sizeof(float)));
      load_f32<<<(threads + bx - 1) / bx, bx>>>(a, b, L, threads);
    } else { printf("unknown kernel %s\n", k); return 1; }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(a)); if (b) CK(cudaFree(b));
    printf("%d %s", id++, line);
  }
  return 0;
}
