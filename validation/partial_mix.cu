// Partly written sectors beside other L2 traffic (issue 53, item 2): does the time the L2 slices
// spend on partly written sectors add to the time of the reads that pass through them, or do
// the two overlap? Every thread reads R floats, coalesced, and stores their sum in the pattern
// of validation/store_patterns.cu's store_f32 (each warp instruction spreads its 32 lanes over
// L lines, L = 32: one 4-byte word per line, as a naive transpose's stores; L = 1: whole lines).
//   mix_dram R L   the R reads stream from R stretches of one input, each the output's size (DRAM)
//   mix_l2 R L     the R reads come from one 4 MiB array that stays in the L2, loaded with
//                  __ldcg (cached in the L2 only), so that they hit there and never in the L1
//   mix_l2 R L S   the same, but only every S-th warp stores (S = 0: none), so that the partly
//                  written sectors are a smaller share of the L2's work
// Measured by validation/partial_mix.sh with ncu at base clocks. Each config line:
// kernel R L lines_total block_x [S]. Prints "ID line" per launch.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)

#define MAX_R 16
#define SMALL_FLOATS (1L << 20)  // 4 MiB: far below the L2, read by every warp in turn

// store_f32's pattern (validation/store_patterns.cu): C = 32 / lanes per line consecutive warps
// share L lines, warp w filling chunk w % C of lines (w / C) * L .. + L - 1.
__device__ __forceinline__ long pattern_index(long t, int L) {
  int log_l = __ffs(L) - 1;
  int log_g = 5 - log_l;       // lanes per line
  int log_chunks = 5 - log_g;  // warps that share a group of L lines
  long w = t >> 5;
  int lane = (int)(t & 31);
  long line = ((w >> log_chunks) << log_l) + (lane >> log_g);
  int chunk = (int)(w & ((1 << log_chunks) - 1));
  return (line << 5) + ((long)chunk << log_g) + (lane & ((1 << log_g) - 1));
}

// One input of R stretches (an array of pointers indexed at run time would be copied to local
// memory by every thread, whose stores the L2 counts too).
__global__ void mix_dram(const float* in, float* out, int R, int L, long threads) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  float s = 0.f;
  for (int r = 0; r < R; ++r) s += in[r * threads + t];
  out[pattern_index(t, L)] = s;
}

__global__ void mix_l2(const float* small, float* out, int R, int L, int S, long threads) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  float s = 0.f;
  // Read r of warp w takes line w * MAX_R + r (modulo the array): R whole lines per warp.
  long w = t >> 5;
  int lane = (int)(t & 31);
  for (int r = 0; r < R; ++r) s += __ldcg(&small[((w * MAX_R + r) * 32 + lane) & (SMALL_FLOATS - 1)]);
  if (S == 1 || (S > 1 && w % S == 0)) out[pattern_index(t, L)] = s;
  else if (s == 12345.f) out[0] = s;  // never: keeps the reads
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: partial_mix LAUNCHES\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[32]; int R, L, bx, S = 1; long lines;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %ld %d %d", k, &R, &L, &lines, &bx, &S) < 5) continue;
    if (R < 0 || R > MAX_R) { printf("R must be 0..%d\n", MAX_R); return 1; }
    size_t bytes = (size_t)lines * 128;
    long threads = lines * 32;  // each output float written once
    float* out = 0;
    CK(cudaMalloc(&out, bytes)); CK(cudaMemset(out, 0, bytes));
    float *in = 0, *small = 0;
    if (!strcmp(k, "mix_dram")) {
      if (R > 0) { CK(cudaMalloc(&in, bytes * R)); CK(cudaMemset(in, 0, bytes * R)); }
      mix_dram<<<(threads + bx - 1) / bx, bx>>>(in, out, R, L, threads);
    } else if (!strcmp(k, "mix_l2")) {
      CK(cudaMalloc(&small, SMALL_FLOATS * sizeof(float))); CK(cudaMemset(small, 0, SMALL_FLOATS * sizeof(float)));
      mix_l2<<<(threads + bx - 1) / bx, bx>>>(small, out, R, L, S, threads);
    } else { printf("unknown kernel %s\n", k); return 1; }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(out)); if (small) CK(cudaFree(small)); if (in) CK(cudaFree(in));
    printf("%d %s", id++, line);
  }
  return 0;
}
