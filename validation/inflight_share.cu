// Whether a load that finds its line still being filled for another warp counts as an L1 hit
// (issue 53, item 5; docs/validation.md "Matrix products": the naive product's blocks of one
// column meet on the GPU and seemed to miss each other's fills; on the H200 they do not, every
// launch here misses each line once: tests/data/h200/inflight_share/). Every warp streams N
// 128-byte lines (one float per lane, unrolled by 8) from the region of its SM (%smid), so all
// warps on one SM read the same lines; with no delay they start together and ask for each line
// while it is in flight, with a delay the later ones find it filled. Launch lines:
//   blocks G D [W]  G blocks of W warps (1 unless given); blocks G/2 .. G-1 start D ns late
//   warps W D    one block of W warps per SM (grid = SMs); warps W/2 .. W-1 start D ns late
//   twice 1 0    one warp per SM reading each line twice in a row (the same warp, in flight)
//   regions G K [W]  G blocks of W warps (1 unless given), none late; each SM's blocks spread
//                over K regions of their own
//                (region smid * K + (blockIdx / SMs) % K): the naive product's blocks of 4 columns
//                an SM, 8 of each, are "regions 4224 4" (inflight_share_many_launches.txt)
//   a fifth number M (any mode; W then needed, ignored by warps and twice) runs the kernel whose
//   loop reads line i % M: M < 4096 reads the region's first M lines over and over, and M = 4096
//   the same lines as without, with the modulo's instructions besides, so that the warps compete
//   for issue (inflight_share_warps_launches.txt)
// Prints "ID line" per launch and, for each, how many blocks each SM ran (the regions' sharers).
// The H200's data (tests/data/h200/inflight_share/) was measured with this file as of commit
// 016bb39 (the plain loop only); the H100's with this one (Wrap and Stamp off unless asked).
#include <cstdio>
#include <cstring>
#include <vector>
#include <map>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1;} } while (0)
__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long gtime() { unsigned long long r; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r)); return r; }
constexpr int N = 4096;  // lines per region: 512 KiB, more than the L1

template <bool Wrap, bool Stamp>  // Stamp: only the stamped runs (STAMPS_DIR) pay for the stamps
__global__ void share(const float* __restrict__ a, float* out, int delayed_block, int delayed_warp, long delay_ns, int twice, int regions, int sms, int span, unsigned* sm_of, unsigned long long* stamps) {
  unsigned long long t0 = gtime();
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if ((int)blockIdx.x >= delayed_block || warp >= delayed_warp)
    while (gtime() < t0 + delay_ns) {}
  size_t region = (size_t)smid() * regions + (blockIdx.x / sms) % regions;
  const float* r = a + region * N * 32 + lane;
  float s = 0.0f;
  unsigned long long half = 0;
#pragma unroll 8
  for (int i = 0; i < N; i++) {
    if (Stamp && i == N / 2) half = gtime();
    const size_t at = (size_t)(Wrap ? i % span : i) * 32;
    s += r[at];
    if (twice) s += __ldca(r + at) * 0.5f;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) sm_of[blockIdx.x] = smid();
  if (Stamp && lane == 0) {  // warp's start, halfway and end on the global timer
    unsigned long long* w = stamps + 3 * ((size_t)blockIdx.x * (blockDim.x / 32) + warp);
    w[0] = t0; w[1] = half; w[2] = gtime();
  }
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: inflight_share LAUNCHES [STAMPS_DIR]\n"); return 1; }
  const char* stamps_dir = argc > 2 ? argv[2] : nullptr;  // writes ID.csv: block, warp, sm, start, half, end (ns)
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float *a, *out; unsigned* sm_of;
  const size_t bytes = (size_t)sms * 32 * N * 32 * 4;  // up to 32 regions an SM
  CK(cudaMalloc(&a, bytes)); CK(cudaMemset(a, 0, bytes));
  CK(cudaMalloc(&out, 1 << 22)); CK(cudaMalloc(&sm_of, 8192 * 4));
  unsigned long long* stamps = nullptr;
  if (stamps_dir) CK(cudaMalloc(&stamps, (size_t)1 << 20 << 3));
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char mode[32]; int g = 0, w = 1, span = N; long d = 0;
    const int fields = line[0] == '#' ? 0 : sscanf(line, "%31s %d %ld %d %d", mode, &g, &d, &w, &span);
    if (fields < 3) continue;
    int grid, block, db = 1 << 30, dw = 1 << 30, twice = 0, regions = 1;
    if (!strcmp(mode, "blocks")) { grid = g; block = 32 * w; db = g / 2; }
    else if (!strcmp(mode, "warps")) { grid = sms; block = 32 * g; dw = g / 2; }
    else if (!strcmp(mode, "twice")) { grid = sms; block = 32; twice = 1; }
    else if (!strcmp(mode, "regions")) { grid = g; block = 32 * w; regions = (int)d; }
    else { printf("unknown mode %s\n", mode); return 1; }
    auto kernel = fields == 5 ? (stamps ? share<true, true> : share<true, false>)
                              : (stamps ? share<false, true> : share<false, false>);
    kernel<<<grid, block>>>(a, out, db, dw, d, twice, regions, sms, span, sm_of, stamps);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> h(grid);
    CK(cudaMemcpy(h.data(), sm_of, grid * 4, cudaMemcpyDeviceToHost));
    std::map<unsigned, int> per; for (unsigned s : h) per[s]++;
    std::map<int, int> hist; for (auto& p : per) hist[p.second]++;
    line[strcspn(line, "\n")] = 0;
    printf("%d %s | SMs used %zu, blocks per SM:", id++, line, per.size());
    for (auto& p : hist) printf(" %dx%d", p.second, p.first);
    printf("\n");
    if (stamps_dir) {
      const int warps = block / 32;
      std::vector<unsigned long long> t((size_t)grid * warps * 3);
      CK(cudaMemcpy(t.data(), stamps, t.size() * 8, cudaMemcpyDeviceToHost));
      char path[512]; snprintf(path, sizeof path, "%s/%d.csv", stamps_dir, id - 1);
      FILE* f = fopen(path, "w");
      if (!f) { printf("cannot write %s\n", path); return 1; }
      fprintf(f, "block,warp,sm,start,half,end\n");
      for (int b = 0; b < grid; b++)
        for (int w = 0; w < warps; w++) {
          const unsigned long long* x = &t[3 * ((size_t)b * warps + w)];
          fprintf(f, "%d,%d,%u,%llu,%llu,%llu\n", b, w, h[b], x[0], x[1], x[2]);
        }
      fclose(f);
    }
  }
  return 0;
}
