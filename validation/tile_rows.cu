// Why the tiled transpose runs slower than a copy of the same bytes through the same block
// structure (issue 53, item 3: latency-bound regimes). On the H200 the tiled transpose in 32x16
// and 32x32 blocks moves 1.1-1.7 TB/s where the barrier benchmark's exchange in 1024-thread
// blocks (one float a thread, a barrier, each thread storing its mirror's value) moves 1.9 TB/s
// with as many bytes in flight; the model predicts both from the same volumes and rounds.
// Every kernel moves one 32x32 tile of floats per block (blockDim 32 x R, R = 4, 8, 16 or 32:
// each thread 32 / R rows, loaded back to back, then a barrier, then stored from a shared tile
// read so that every warp's stores wait on other warps' loads). They differ only in where the
// tile's rows lie:
//   rowcopy       the block's 32 rows are 32 consecutive lines (4 KiB contiguous), blocks in order
//   tilecopy      the rows lie `pitch` floats apart (tile (bx, by) of an n x n matrix), stored
//                 back to the same place: neighbouring blocks touch neighbouring lines
//   tilecopy_t    the same with the tiles visited column by column (block (bx, by) moves tile
//                 (by, bx)): neighbouring blocks touch lines 32 rows apart, loads and stores
//   transpose     NVIDIA's transposeCoalesced (32x33 tile): loads as tilecopy, stores as
//                 tilecopy_t (each block's 32 store lines 32 rows away from its neighbour's)
// `pitch` = n is the usual power-of-two row; n + 32 moves each row by one line.
//   rowcopy_c<R>, transpose_c<R>   rowcopy and transpose with R known to the compiler: the loops
//                 unroll whole, so the same accesses take a third of the instructions or less
//                 (the runtime R's unrolled loops compute every group's addresses)
// Lifted by the simulator from this file (entry = kernel name; n and pitch set by name:
// tests/data/h200/tile_rows/manifest.toml).
//   tile_rows LAUNCHES   (lines "kernel n pitch R"; prints "ID line" per launch)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

__global__ void rowcopy(const float* __restrict__ in, float* __restrict__ out, int n, int pitch) {
  __shared__ float tile[32][33];
  int R = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;  // signed R: ptxas unrolls the loops, as in new_kernels.cu
  int base = (blockIdx.y * gridDim.x + blockIdx.x) * 1024;
  for (int j = 0; j < 32; j += R)
    tile[ty + j][tx] = in[base + (ty + j) * 32 + tx];
  __syncthreads();
  for (int j = 0; j < 32; j += R)
    out[base + (ty + j) * 32 + tx] = tile[31 - ty - j][tx];
}

__global__ void tilecopy(const float* __restrict__ in, float* __restrict__ out, int n, int pitch) {
  __shared__ float tile[32][33];
  int R = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * 32 + tx;
  int y = blockIdx.y * 32 + ty;
  for (int j = 0; j < 32; j += R) tile[ty + j][tx] = in[(y + j) * pitch + x];
  __syncthreads();
  for (int j = 0; j < 32; j += R) out[(y + j) * pitch + x] = tile[31 - ty - j][tx];
}

__global__ void tilecopy_t(const float* __restrict__ in, float* __restrict__ out, int n, int pitch) {
  __shared__ float tile[32][33];
  int R = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.y * 32 + tx;
  int y = blockIdx.x * 32 + ty;
  for (int j = 0; j < 32; j += R) tile[ty + j][tx] = in[(y + j) * pitch + x];
  __syncthreads();
  for (int j = 0; j < 32; j += R) out[(y + j) * pitch + x] = tile[31 - ty - j][tx];
}

__global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int n, int pitch) {
  __shared__ float tile[32][33];
  int R = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * 32 + tx;
  int y = blockIdx.y * 32 + ty;
  for (int j = 0; j < 32; j += R) tile[ty + j][tx] = in[(y + j) * pitch + x];
  __syncthreads();
  x = blockIdx.y * 32 + tx;
  y = blockIdx.x * 32 + ty;
  for (int j = 0; j < 32; j += R) out[(y + j) * pitch + x] = tile[tx][ty + j];
}

template <int R>
__global__ void rowcopy_c(const float* __restrict__ in, float* __restrict__ out, int n, int pitch) {
  __shared__ float tile[32][33];
  int tx = threadIdx.x, ty = threadIdx.y;
  int base = (blockIdx.y * gridDim.x + blockIdx.x) * 1024;
#pragma unroll
  for (int j = 0; j < 32; j += R) tile[ty + j][tx] = in[base + (ty + j) * 32 + tx];
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 32; j += R) out[base + (ty + j) * 32 + tx] = tile[31 - ty - j][tx];
}

template <int R>
__global__ void transpose_c(const float* __restrict__ in, float* __restrict__ out, int n, int pitch) {
  __shared__ float tile[32][33];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * 32 + tx;
  int y = blockIdx.y * 32 + ty;
#pragma unroll
  for (int j = 0; j < 32; j += R) tile[ty + j][tx] = in[(y + j) * pitch + x];
  __syncthreads();
  x = blockIdx.y * 32 + tx;
  y = blockIdx.x * 32 + ty;
#pragma unroll
  for (int j = 0; j < 32; j += R) out[(y + j) * pitch + x] = tile[tx][ty + j];
}

typedef void (*Kernel)(const float*, float*, int, int);
struct Entry { const char* name; int rows; Kernel fn; };  // rows 0: any blockDim.y
static const Entry kernels[] = {
    {"rowcopy", 0, rowcopy}, {"tilecopy", 0, tilecopy}, {"tilecopy_t", 0, tilecopy_t},
    {"transpose", 0, transpose},
    {"rowcopy_c", 8, rowcopy_c<8>}, {"rowcopy_c", 16, rowcopy_c<16>}, {"rowcopy_c", 32, rowcopy_c<32>},
    {"transpose_c", 8, transpose_c<8>}, {"transpose_c", 16, transpose_c<16>},
    {"transpose_c", 32, transpose_c<32>}};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: tile_rows LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int n, pitch, rows;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %d", k, &n, &pitch, &rows) < 4) continue;
    const Entry* e = 0;
    for (const Entry& c : kernels) if (!strcmp(c.name, k) && (!c.rows || c.rows == rows)) e = &c;
    if (!e) { printf("unknown kernel %s\n", k); return 1; }
    if (n % 32 || pitch < n || 32 % rows) { printf("bad launch: %s", line); return 1; }
    size_t bytes = (size_t)n * pitch * sizeof(float);
    float *a, *b;
    CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 0, bytes)); CK(cudaMemset(b, 0, bytes));
    e->fn<<<dim3(n / 32, n / 32), dim3(32, rows)>>>(a, b, n, pitch);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(a)); CK(cudaFree(b));
    printf("%d %s", id++, line);
  }
  return 0;
}
