// Whether the DRAM moves the same bytes slower when they come in short pieces of many rows (issue
// 53: the tiled kernels of validation/tile_rows.cu run 10-20 % slower than the DRAM rate where a
// copy of whole rows does not). A copy of 2^26 floats (256 MiB read, 256 MiB written) in blocks of
// 32 warps, each warp moving V = 1, 4 or 8 lines of 128 bytes (V loads in flight: the block moves
// the lines of V virtual blocks, gridDim.x apart); the array is a matrix of rows of P lines (a pitch
// of P x 128 bytes) and the (virtual) blocks take it in one of three orders:
//   rows      block b moves lines 32 b .. 32 b + 31: whole rows, in order (P does not matter)
//   tiles     block b moves one line of each of 32 rows (a 32 x 1-line tile column): the tiles of a
//             band of 32 rows left to right, then the next band (tile_rows.cu's tilecopy)
//   columns   the same tiles, top to bottom first, then the next column (tilecopy_t)
// for P = 32, 128, 256 and 1024 lines (4, 16, 32 and 128 KiB rows). Each launch runs 20 times
// after a warm-up, timed by CUDA events (boost clock, no profiler).
//
//   dram_pages OUT.csv     columns: order, lines_per_row, lines_per_warp, median_us, gb_s
//                          (reads + writes)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)

static const uint64_t WORDS = 1ull << 26;
static const uint64_t LINES = WORDS / 32;

enum Order { ROWS, TILES, COLUMNS };
static const char* order_name[] = {"rows", "tiles", "columns"};

// The line that warp w of (virtual) block b moves.
__device__ __forceinline__ uint64_t line_of(uint64_t b, uint64_t w, int order, uint64_t p) {
  if (order == ROWS) return b * 32 + w;
  uint64_t bands = LINES / p / 32;  // bands of 32 rows
  uint64_t band = order == TILES ? b / p : b % bands;
  uint64_t col = order == TILES ? b % p : b / bands;
  return (band * 32 + w) * p + col;
}

// Each block moves the lines of V virtual blocks, gridDim.x apart (V loads in flight a warp).
template <int V>
__global__ void copy_lines(const float* __restrict__ in, float* __restrict__ out, int order, uint64_t p) {
  uint64_t w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float v[V];
  uint64_t line[V];
#pragma unroll
  for (int k = 0; k < V; k++) {
    line[k] = line_of(blockIdx.x + (uint64_t)k * gridDim.x, w, order, p);
    v[k] = in[line[k] * 32 + lane];
  }
#pragma unroll
  for (int k = 0; k < V; k++) out[line[k] * 32 + lane] = v[k];
}

template <int V>
void measure(FILE* f, const float* in, float* out, cudaEvent_t e0, cudaEvent_t e1) {
  int blocks = int(LINES / 32 / V);
  for (int order : {ROWS, TILES, COLUMNS}) {
    for (uint64_t p : {32ull, 128ull, 256ull, 1024ull}) {
      if (order == ROWS && p != 32) continue;
      copy_lines<V><<<blocks, 1024>>>(in, out, order, p);
      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      float ms[20];
      for (int r = 0; r < 20; r++) {
        CK(cudaEventRecord(e0));
        copy_lines<V><<<blocks, 1024>>>(in, out, order, p);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms[r], e0, e1));
      }
      std::sort(ms, ms + 20);
      double us = (ms[9] + ms[10]) * 500.0;
      fprintf(f, "%s,%llu,%d,%.1f,%.0f\n", order_name[order], (unsigned long long)p, V, us, 2.0 * WORDS * 4 / (us * 1e3));
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: dram_pages OUT.csv\n"); return 1; }
  FILE* f = fopen(argv[1], "w");
  if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  float *in, *out;
  CK(cudaMalloc(&in, WORDS * 4));
  CK(cudaMalloc(&out, WORDS * 4));
  CK(cudaMemset(in, 0, WORDS * 4));
  CK(cudaMemset(out, 0, WORDS * 4));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  fprintf(f, "order,lines_per_row,lines_per_warp,median_us,gb_s\n");
  measure<1>(f, in, out, e0, e1);
  measure<4>(f, in, out, e0, e1);
  measure<8>(f, in, out, e0, e1);
  fclose(f);
  return 0;
}
