// Whether a load that finds its line still being filled for another warp counts as an L1 hit
// (issue 53, item 5; docs/validation.md "Matrix products": the naive product's blocks of one
// column meet on the GPU and seemed to miss each other's fills; on the H200 they do not, every
// launch here misses each line once: tests/data/h200/inflight_share/). Every warp streams N
// 128-byte lines (one float per lane, unrolled by 8) from the region of its SM (%smid), so all
// warps on one SM read the same lines; with no delay they start together and ask for each line
// while it is in flight, with a delay the later ones find it filled. Launch lines:
//   blocks G D   G blocks of one warp; blocks G/2 .. G-1 start D ns late (G = 2 x SMs: two a SM)
//   warps W D    one block of W warps per SM (grid = SMs); warps W/2 .. W-1 start D ns late
//   twice 1 0    one warp per SM reading each line twice in a row (the same warp, in flight)
//   regions G K  G one-warp blocks, none late; each SM's blocks spread over K regions of their own
//                (region smid * K + (blockIdx / SMs) % K): the naive product's blocks of 4 columns
//                an SM, 8 of each, are "regions 4224 4" (inflight_share_many_launches.txt)
// Prints "ID line" per launch and, for each, how many blocks each SM ran (the regions' sharers).
#include <cstdio>
#include <cstring>
#include <vector>
#include <map>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1;} } while (0)
__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long gtime() { unsigned long long r; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r)); return r; }
constexpr int N = 4096;  // lines per region: 512 KiB, more than the L1

__global__ void share(const float* __restrict__ a, float* out, int delayed_block, int delayed_warp, long delay_ns, int twice, int regions, int sms, unsigned* sm_of) {
  unsigned long long t0 = gtime();
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if ((int)blockIdx.x >= delayed_block || warp >= delayed_warp)
    while (gtime() < t0 + delay_ns) {}
  size_t region = (size_t)smid() * regions + (blockIdx.x / sms) % regions;
  const float* r = a + region * N * 32 + lane;
  float s = 0.0f;
#pragma unroll 8
  for (int i = 0; i < N; i++) {
    s += r[(size_t)i * 32];
    if (twice) s += __ldca(r + (size_t)i * 32) * 0.5f;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) sm_of[blockIdx.x] = smid();
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: inflight_share LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float *a, *out; unsigned* sm_of;
  const size_t bytes = (size_t)sms * 32 * N * 32 * 4;  // up to 32 regions an SM
  CK(cudaMalloc(&a, bytes)); CK(cudaMemset(a, 0, bytes));
  CK(cudaMalloc(&out, 1 << 22)); CK(cudaMalloc(&sm_of, 8192 * 4));
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char mode[32]; int g = 0; long d = 0;
    if (line[0] == '#' || sscanf(line, "%31s %d %ld", mode, &g, &d) != 3) continue;
    int grid, block, db = 1 << 30, dw = 1 << 30, twice = 0, regions = 1;
    if (!strcmp(mode, "blocks")) { grid = g; block = 32; db = g / 2; }
    else if (!strcmp(mode, "warps")) { grid = sms; block = 32 * g; dw = g / 2; }
    else if (!strcmp(mode, "twice")) { grid = sms; block = 32; twice = 1; }
    else if (!strcmp(mode, "regions")) { grid = g; block = 32; regions = (int)d; }
    else { printf("unknown mode %s\n", mode); return 1; }
    share<<<grid, block>>>(a, out, db, dw, d, twice, regions, sms, sm_of);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> h(grid);
    CK(cudaMemcpy(h.data(), sm_of, grid * 4, cudaMemcpyDeviceToHost));
    std::map<unsigned, int> per; for (unsigned s : h) per[s]++;
    std::map<int, int> hist; for (auto& p : per) hist[p.second]++;
    line[strcspn(line, "\n")] = 0;
    printf("%d %s | SMs used %zu, blocks per SM:", id++, line, per.size());
    for (auto& p : hist) printf(" %dx%d", p.second, p.first);
    printf("\n");
  }
  return 0;
}
