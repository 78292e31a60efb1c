// Does the L2 count a lookup of a sector whose fill is still on its way as a miss? (issue 13: L2
// near-partition misses and fabric traffic, which the simulation, having no time, undercounts where
// neighbouring blocks read the same lines at the same moment.)
//
// G blocks of 1024 threads (one per SM) each read the same array of N doubles, coalesced, once;
// block b starts at element (b * SHIFT) % N and wraps around. SHIFT = 0: every block reads the same
// line at about the same time, so all but the first lookup per partition find the fill in flight;
// SHIFT = N / G: the blocks start on lines far apart and meet a line only after its fill is long
// done. A cache without in-flight misses counts the same lookup misses in both (one per sector per
// partition that reads it); DRAM reads are one per sector in both.
//   nvcc -O3 -arch=sm_90 -o l2_inflight l2_inflight.cu
//   ncu --cache-control all --clock-control base --metrics ... ./l2_inflight > l2_inflight_runs.csv
// Output: one row per launch (ncu ID = row): id,blocks,doubles,shift,sms_used,sms (the SMs of up to
// 8 blocks, for their L2 sides)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }

// pair_a >= 0: only the blocks on SMs pair_a and pair_b read (the others return at once), so two
// chosen SMs (same TPC, same GPC, other GPC, other L2 side) read the same lines together.
__global__ void __launch_bounds__(1024, 1) sweep(const double* __restrict__ a, long n, long shift, double* sink, unsigned* sm_of, int pair_a, int pair_b) {
  if (threadIdx.x == 0) sm_of[blockIdx.x] = smid();
  if (pair_a >= 0 && smid() != (unsigned)pair_a && smid() != (unsigned)pair_b) return;
  long start = ((long)blockIdx.x * shift) % n;
  double acc = 0.0;
  for (long j = threadIdx.x; j < n; j += blockDim.x) {
    long i = start + j;
    if (i >= n) i -= n;
    acc += a[i];
  }
  if (acc == 12345.0) sink[0] = acc; // never true: keeps the loads
}

int main(int argc, char** argv) {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // `l2_inflight pairs A[,B,...] REPS`: SM A (then B, ...) with every other SM in turn, REPS times
  // each (the map of which SMs' requests merge); without arguments, the launches below.
  bool pairs = argc > 1 && !strcmp(argv[1], "pairs");
  const long max_n = 1L << 20; // 8 MiB
  double *a, *sink; unsigned *sm_of;
  CK(cudaMalloc(&a, max_n * 8)); CK(cudaMalloc(&sink, 8)); CK(cudaMalloc(&sm_of, 4096 * 4));
  CK(cudaMemset(a, 0, max_n * 8));
  unsigned h[4096];
  printf("id,blocks,doubles,shift,sms_used,sms\n");
  int id = 0;
  if (pairs) {
    int reps = atoi(argv[3]);
    long n = 1L << 17;
    for (char* tok = strtok(argv[2], ","); tok; tok = strtok(nullptr, ","))
    for (int A = atoi(tok), r = 0; r < reps; r++)
      for (int p = 0; p < sms; p++) {
        if (p == A) continue;
        sweep<<<sms, 1024>>>(a, n, 0, sink, sm_of, A, p);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h, sm_of, sms * 4, cudaMemcpyDeviceToHost));
        int found = 0;
        for (int b = 0; b < sms; b++) if (h[b] == (unsigned)A || h[b] == (unsigned)p) found++;
        printf("%d,pair,%ld,0,%d,%d;%d\n", id++, n, found, A, p);
      }
    return 0;
  }
  long sizes[] = {1L << 14, 1L << 17, 1L << 20}; // 128 KiB, 1 MiB, 8 MiB
  int grids[] = {sms, sms / 2, 8, 2, 1};
  for (long n : sizes)
    for (int g : grids)
      for (int spread = 0; spread < 2; spread++) {
        long shift = spread ? (n / g) / 128 * 128 : 0; // whole lines apart
        if (g == 1 && spread) continue;
        sweep<<<g, 1024>>>(a, n, shift, sink, sm_of, -1, -1);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h, sm_of, g * 4, cudaMemcpyDeviceToHost));
        int used = 0; static int seen[4096]; for (int s = 0; s < 4096; s++) seen[s] = 0;
        for (int b = 0; b < g; b++) if (!seen[h[b]]++) used++;
        printf("%d,%d,%ld,%ld,%d,", id++, g, n, shift, used);
        for (int b = 0; b < g && g <= 8; b++) printf("%s%u", b ? ";" : "", h[b]);
        printf("\n");
      }
  // Two SMs reading 1 MiB together: 124 with 125 (same TPC), 126 (same GPC), 0 (another GPC, the
  // same L2 side on the measured H100 and H200) and 2 (another GPC, the other side); then SM 124
  // alone. The SMs that ran a block are printed (a pair only counts if both appear).
  int partners[] = {125, 126, 0, 2, 124};
  long n = 1L << 17;
  for (int p : partners) {
    sweep<<<sms, 1024>>>(a, n, 0, sink, sm_of, 124, p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h, sm_of, sms * 4, cudaMemcpyDeviceToHost));
    int found = 0;
    for (int b = 0; b < sms; b++) if (h[b] == 124u || h[b] == (unsigned)p) found++;
    printf("%d,pair,%ld,0,%d,124;%d\n", id++, n, found, p);
  }
  return 0;
}
