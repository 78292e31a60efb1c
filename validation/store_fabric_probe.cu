// How many sectors cross the L2 fabric for one SM's stores to a fresh 1 MiB buffer, whole
// sectors against parts of one (issue 13: the H100 narrow set's 1- and 2-wide blocks, whose warps
// store 8 or 16 bytes of a sector each, move more fabric sectors than the simulation counts;
// docs/validation.md "Partition map"). One block per SM (the dynamic shared memory allows no
// second); only the block on SM `sm` stores, the others return at once. Modes, per warp
// instruction:
//   whole:  32 lanes on 32 consecutive doubles (2 lines, all 4 sectors of each)
//   partB:  B bytes (8, 16 or 32) at the start of sector 0 of each line: B/8 lanes a line
//   quad:   four passes over the lines, pass k storing the k-th double of sector 0 (8 bytes; the
//           sector whole after the fourth, as four 1-wide blocks leave it)
//   none:   no block stores (the per-launch constant)
// THREADS threads per block.
//   nvcc -O3 -arch=sm_90 -o store_fabric_probe store_fabric_probe.cu
//   ./store_fabric_probe LAUNCHES_FILE  (lines: mode threads sm; # comments)
// Output: one row per launch, in order (ncu ID = id): id,mode,threads,sm,found (1 when a block ran
// on `sm`).
#include <cstring>
#include "micro.cuh"  // CK, smid

enum Mode { NONE = 0, WHOLE = 1, PART8 = 2, PART16 = 3, PART32 = 4, QUAD = 5 };

__global__ void probe(double* __restrict__ a, long lines, int mode, unsigned sm, unsigned* sm_of) {
  extern __shared__ double pad[];
  unsigned s = smid();
  if (threadIdx.x == 0) sm_of[blockIdx.x] = s;
  if (mode == NONE || s != sm) return;
  double v = 1.0 + pad[0] * 0.0;
  if (mode == WHOLE) {
    for (long j = threadIdx.x; j < lines * 16; j += blockDim.x) a[j] = v;
  } else if (mode == QUAD) {
    for (int k = 0; k < 4; k++)
      for (long j = threadIdx.x; j < lines; j += blockDim.x) a[j * 16 + k] = v;
  } else {
    int per_line = mode == PART8 ? 1 : mode == PART16 ? 2 : 4; // doubles of sector 0
    for (long j = threadIdx.x; j < lines * per_line; j += blockDim.x)
      a[(j / per_line) * 16 + j % per_line] = v;
  }
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: store_fabric_probe LAUNCHES_FILE\n"); return 2; }
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long lines = 8192; // 1 MiB
  double* a; unsigned* sm_of;
  CK(cudaMalloc(&a, lines * 128)); CK(cudaMalloc(&sm_of, 4096 * 4));
  CK(cudaMemset(a, 0, lines * 128));
  int smem = 120 * 1024;
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  FILE* f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 2; }
  printf("id,mode,threads,sm,found\n");
  const char* names[] = {"none", "whole", "part8", "part16", "part32", "quad"};
  char line[256], mode_name[32];
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    int threads, sm;
    if (line[0] == '#' || sscanf(line, "%31s %d %d", mode_name, &threads, &sm) != 3) continue;
    int mode = -1;
    for (int m = 0; m < 6; m++) if (!strcmp(mode_name, names[m])) mode = m;
    if (mode < 0) { fprintf(stderr, "unknown mode %s\n", mode_name); return 2; }
    if (sm < 0 || sm >= sms) { fprintf(stderr, "SM %d out of range\n", sm); return 2; }
    probe<<<sms, threads, smem>>>(a, lines, mode, (unsigned)sm, sm_of);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned h[4096];
    CK(cudaMemcpy(h, sm_of, sms * 4, cudaMemcpyDeviceToHost));
    int found = 0;
    for (int b = 0; b < sms; b++) if (h[b] == (unsigned)sm) found = 1;
    printf("%d,%s,%d,%d,%d\n", id++, mode_name, threads, sm, found);
  }
  return 0;
}
