// Does a home-side read that comes soon after a far side's miss of the same lines miss too?
// (docs/model.md "L2": a far read takes ~92 ns longer than a near hit; the H100's fabric split
// shows the home side missing more often than a replay that serves every request at once.)
//
// One block per SM (the dynamic shared memory allows no second); only the blocks on SMs A and B
// work. Both meet at a flag, then A reads sector 0 of each of LINES fresh lines (one lane a line),
// and B, DELAY_NS later by %globaltimer, reads the same sectors in the same order. With A and B on
// opposite sides of the L2, the lines homed on B's side are far misses of A that B then reads at
// home: within the race B misses too, after it B hits. Lines homed on A's side miss twice always
// (A at home, then B's far miss). Under ncu the near-partition misses per launch tell which.
//   nvcc -O3 -arch=sm_90 -o l2_race_probe l2_race_probe.cu
//   ./l2_race_probe LAUNCHES_FILE   (lines: A B DELAY_NS [LINES, default 4096]; # comments)
// Output: id,sm_a,sm_b,delay_ns,lines,found,b_start_ns (B's measured start after A's).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }

__global__ void probe(const double* __restrict__ a, int lines, unsigned sm_a, unsigned sm_b, long delay_ns,
                      unsigned* meet, unsigned* found, unsigned long long* starts, double* sink) {
  extern __shared__ double pad[];
  unsigned s = smid();
  bool is_a = s == sm_a, is_b = s == sm_b;
  if (!is_a && !is_b) return;
  if (threadIdx.x == 0) {
    atomicAdd(found, 1u);
    atomicAdd(meet, 1u);
    while (atomicAdd(meet, 0u) < 2u) {}
  }
  __syncwarp();
  unsigned long long t0 = gtime();
  if (is_b) while (gtime() - t0 < (unsigned long long)delay_ns) {}
  if (threadIdx.x == 0) starts[is_b] = gtime();
  double acc = 0.0;
  for (int l = threadIdx.x; l < lines; l += 32) acc += __ldcg(a + (long)l * 16);
  if (acc == 12345.0) sink[0] = acc + pad[0];
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: l2_race_probe LAUNCHES_FILE\n"); return 2; }
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int max_lines = 4096; // 512 KiB
  double *a, *sink; unsigned *meet, *found; unsigned long long* starts;
  CK(cudaMalloc(&a, (long)max_lines * 128)); CK(cudaMalloc(&sink, 8));
  CK(cudaMalloc(&meet, 4)); CK(cudaMalloc(&found, 4)); CK(cudaMalloc(&starts, 16));
  CK(cudaMemset(a, 0, (long)max_lines * 128));
  int smem = 120 * 1024;
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  FILE* f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 2; }
  printf("id,sm_a,sm_b,delay_ns,lines,found,b_start_ns\n");
  char buf[256]; int id = 0; unsigned sa, sb; long d;
  while (fgets(buf, sizeof buf, f)) {
    int lines = max_lines;
    if (buf[0] == '#' || sscanf(buf, "%u %u %ld %d", &sa, &sb, &d, &lines) < 3) continue;
    if (lines < 32 || lines > max_lines) { fprintf(stderr, "lines must be 32..%d\n", max_lines); return 2; }
    CK(cudaMemset(meet, 0, 4)); CK(cudaMemset(found, 0, 4)); CK(cudaMemset(starts, 0, 16));
    probe<<<sms, 32, smem>>>(a, lines, sa, sb, d, meet, found, starts, sink);
    CK(cudaDeviceSynchronize());
    unsigned fo; unsigned long long st[2];
    CK(cudaMemcpy(&fo, found, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(st, starts, 16, cudaMemcpyDeviceToHost));
    printf("%d,%u,%u,%ld,%d,%u,%lld\n", id++, sa, sb, d, lines, fo, (long long)(st[1] - st[0]));
  }
  return 0;
}
