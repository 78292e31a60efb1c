// Which L2 reads of two SMs merge before the L2? (issue 13: blocks one row high read fewer L2
// sectors than they miss in L1; validation/l2_inflight.cu found that two SMs of one GPC reading
// the same lines together are seen by the L2 once. Nsight Compute names the unit that does it: the
// L2 Request Coalescer, LRC, which "tries to coalesce read requests before forwarding them".)
//
// One block per SM (the dynamic shared memory allows no second); only the blocks on the SMs of
// lists A and B read, the others return at once. All read the same LINES lines of doubles, each
// once, in the same order; B starts OFFSET lines later (and wraps around), so B reads a line about
// OFFSET lines' time after A. Modes, per warp instruction:
//   full:   32 lanes on 32 consecutive doubles (2 lines, all 4 sectors of each)
//   sector: 32 lanes on 32 lines, sector 0 of each (one double per line)
//   mixed:  A as `sector`, B as `full` (does a one-sector read join a four-sector one?)
//   solo:   A alone, as `full` (the single-reader reference; B is ignored)
// THREADS threads per block: the lines a block has in flight.
//   nvcc -O3 -arch=sm_90 -o lrc_probe lrc_probe.cu
//   ./lrc_probe LAUNCHES_FILE  (lines: mode threads offset A B, where A and B are SMs or
//   comma-separated lists of SMs, `-` for none; # comments)
// Output: one row per launch, in order (ncu ID = row): id,mode,threads,offset,sm_a,sm_b (lists
// joined by ';'),readers (SMs listed),found (how many of them ran a block: a row counts only when
// found = readers).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }

enum Mode { FULL = 0, SECTOR = 1, MIXED = 2, SOLO = 3 };

// role[sm]: 0 idle, 1 in list A, 2 in list B.
__global__ void probe(const double* __restrict__ a, long lines, int mode, long offset, const unsigned char* role,
                      double* sink, unsigned* sm_of) {
  extern __shared__ double pad[];
  unsigned s = smid();
  if (threadIdx.x == 0) sm_of[blockIdx.x] = s;
  bool is_a = role[s] == 1, is_b = role[s] == 2 && mode != SOLO;
  if (!is_a && !is_b) return;
  long start = is_b ? offset % lines : 0;
  bool one_sector = mode == SECTOR || (mode == MIXED && is_a);
  double acc = 0.0;
  if (one_sector) {
    for (long j = threadIdx.x; j < lines; j += blockDim.x) {
      long l = start + j;
      if (l >= lines) l -= lines;
      acc += a[l * 16];
    }
  } else {
    long n = lines * 16;
    for (long j = threadIdx.x; j < n; j += blockDim.x) {
      long i = start * 16 + j;
      if (i >= n) i -= n;
      acc += a[i];
    }
  }
  if (acc == 12345.0) sink[0] = acc + pad[0]; // never true: keeps the loads
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: lrc_probe LAUNCHES_FILE\n"); return 2; }
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long lines = 8192; // 1 MiB
  double *a, *sink; unsigned *sm_of;
  CK(cudaMalloc(&a, lines * 128)); CK(cudaMalloc(&sink, 8)); CK(cudaMalloc(&sm_of, 4096 * 4));
  CK(cudaMemset(a, 0, lines * 128));
  // More shared memory than half an SM has: one block per SM, whatever THREADS is.
  int smem = 120 * 1024;
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  FILE* f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 2; }
  unsigned char* role; CK(cudaMalloc(&role, 4096));
  printf("id,mode,threads,offset,sm_a,sm_b,readers,found\n");
  const char* names[] = {"full", "sector", "mixed", "solo"};
  char line[1024], mode_name[32], list_a[512], list_b[512];
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    int threads; long offset;
    if (line[0] == '#' || sscanf(line, "%31s %d %ld %511s %511s", mode_name, &threads, &offset, list_a, list_b) != 5) continue;
    int mode = -1;
    for (int m = 0; m < 4; m++) if (!strcmp(mode_name, names[m])) mode = m;
    if (mode < 0) { fprintf(stderr, "unknown mode %s\n", mode_name); return 2; }
    unsigned char h_role[4096] = {0};
    int readers = 0;
    for (int which = 1; which <= 2; which++) {
      if (which == 2 && mode == SOLO) break;
      char copy[512]; strcpy(copy, which == 1 ? list_a : list_b);
      for (char* tok = strtok(copy, ","); tok; tok = strtok(nullptr, ",")) {
        if (!strcmp(tok, "-")) continue;
        int sm = atoi(tok);
        if (sm < 0 || sm >= sms) { fprintf(stderr, "SM %d out of range\n", sm); return 2; }
        if (!h_role[sm]) readers++;
        h_role[sm] = which;
      }
    }
    CK(cudaMemcpy(role, h_role, 4096, cudaMemcpyHostToDevice));
    probe<<<sms, threads, smem>>>(a, lines, mode, offset, role, sink, sm_of);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned h[4096];
    CK(cudaMemcpy(h, sm_of, sms * 4, cudaMemcpyDeviceToHost));
    int found = 0;
    for (int b = 0; b < sms; b++) if (h_role[h[b]]) found++;
    for (char* c = list_a; *c; c++) if (*c == ',') *c = ';';
    for (char* c = list_b; *c; c++) if (*c == ',') *c = ';';
    printf("%d,%s,%d,%ld,%s,%s,%d,%d\n", id++, mode_name, threads, offset, list_a, list_b, readers, found);
  }
  return 0;
}
