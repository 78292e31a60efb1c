// L1 data-pipe wavefronts of the warp-wide register operations: shuffles (SHFL), votes (VOTE),
// reductions (REDUX) and matches (MATCH), which move no memory but may pass through the LSU's
// data pipe (`l1tex__data_pipe_lsu_wavefronts`). The streams benchmark's read_kK sums a warp with
// five shuffles of a double and counts ~10 wavefronts per warp more than its loads and store
// explain (docs/validation.md, "streams").
// Each config line: kernel n_ops block blocks. Every kernel reads blockIdx.x once (one shared
// wavefront per launched warp, docs/model.md), runs n_ops operations per thread in a loop that
// is not unrolled, and stores only under a condition never met, so no memory moves. `alu` runs
// the same loop with an add in place of the operation: the baseline.
//   xor32 / idx32 / up32 / down32: __shfl_{xor,,up,down}_sync of a float, full mask
//   xor32w8: __shfl_xor_sync with width 8;  xor64: of a double (two SHFL);
//   half32: lanes 0-15 only (mask 0xffff), xor of a float;  vote: __ballot_sync;
//   redux: __reduce_add_sync (unsigned);  match: __match_any_sync;  pair32: two independent
//   xor shuffles per iteration (counted as 2 ops).
// Read with ncu (validation/warp_ops_probe.sh); data in tests/data/h200/warp_ops/.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
#define FULL 0xffffffffu
#define SINK(v) if ((v) == 12345.678f) out[blockIdx.x] = (v);
#define SINKU(v) if ((v) == 0x9e3779b9u) out[blockIdx.x] = 1.0f;

__global__ void k_alu(float* out, int n) {
  float v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v = v * 1.0001f + (float)(i & 31);
  SINK(v)
}
__global__ void k_xor32(float* out, int n) {
  float v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __shfl_xor_sync(FULL, v, i & 31);
  SINK(v)
}
__global__ void k_idx32(float* out, int n) {
  float v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __shfl_sync(FULL, v, i & 31);
  SINK(v)
}
__global__ void k_up32(float* out, int n) {
  float v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __shfl_up_sync(FULL, v, (i & 15) + 1);
  SINK(v)
}
__global__ void k_down32(float* out, int n) {
  float v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __shfl_down_sync(FULL, v, (i & 15) + 1);
  SINK(v)
}
__global__ void k_xor32w8(float* out, int n) {
  float v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __shfl_xor_sync(FULL, v, i & 7, 8);
  SINK(v)
}
__global__ void k_xor64(float* out, int n) {
  double v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __shfl_xor_sync(FULL, v, i & 31);
  SINK((float)v)
}
__global__ void k_half32(float* out, int n) {
  float v = threadIdx.x + blockIdx.x;
  if ((threadIdx.x & 31) < 16)
    for (int i = 0; i < n; i++) v += __shfl_xor_sync(0xffffu, v, i & 15);
  SINK(v)
}
__global__ void k_pair32(float* out, int n) {
  float v = threadIdx.x + blockIdx.x, w = threadIdx.x * 3;
  for (int i = 0; i < n; i += 2) {
    v += __shfl_xor_sync(FULL, v, i & 31);
    w += __shfl_xor_sync(FULL, w, (i + 1) & 31);
  }
  SINK(v + w)
}
__global__ void k_vote(float* out, int n) {
  unsigned v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __ballot_sync(FULL, (v >> (i & 7)) & 1);
  SINKU(v)
}
__global__ void k_redux(float* out, int n) {
  unsigned v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __reduce_add_sync(FULL, v) >> 5;
  SINKU(v)
}
__global__ void k_match(float* out, int n) {
  unsigned v = threadIdx.x + blockIdx.x;
  for (int i = 0; i < n; i++) v += __match_any_sync(FULL, v >> 3) & 1u;
  SINKU(v)
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: warp_ops_probe LAUNCHES\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); char line[256];
  if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  float* out; CK(cudaMalloc(&out, 1 << 24)); CK(cudaMemset(out, 0, 1 << 24));
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[32]; int n, bx, blocks;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %d", k, &n, &bx, &blocks) < 4) continue;
    dim3 b(bx), g(blocks);
#define L(name) else if (!strcmp(k, #name)) k_##name<<<g, b>>>(out, n);
    if (0) {}
    L(alu) L(xor32) L(idx32) L(up32) L(down32) L(xor32w8) L(xor64) L(half32) L(pair32) L(vote) L(redux) L(match)
    else { printf("unknown kernel %s\n", k); return 1; }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
}
