// Fabric traffic of two SMs storing into the same lines one after the other (issue 13: the H100
// narrow set's 1- and 2-wide blocks move 0.4 fabric sectors per far store request that are neither
// reads nor writes, lts__t_sectors_srcunit_ltcfabric less its op_read and op_write parts; a line
// there is stored by 2-16 blocks, a sector by 1-4). One block per SM (the dynamic shared memory
// allows no second); the block on SM A stores into every line of a fresh 1 MiB buffer, then the
// block on SM B does (it waits for A's flag); the others return at once. Modes:
//   part8:  A stores double 0 of sector 0 of each line, B double 1 (8 bytes each, one sector)
//   sector: A stores sector 0 whole, B sector 1 (different sectors of one line)
//   whole:  A stores every line whole, then B does again
//   none:   nobody stores (the per-launch constant)
// A = B stores twice from one SM. A fourth word `together` lets B start at once, without waiting:
// the two store into the same lines at about the same time.
//   nvcc -O3 -arch=sm_90 -o store_pair_probe store_pair_probe.cu
//   ./store_pair_probe LAUNCHES_FILE  (lines: mode A B [together]; # comments)
// Output: one row per launch (ncu ID = id): id,mode,sm_a,sm_b,together,found (1 when both ran).
#include <cstring>
#include "micro.cuh"  // CK, smid

enum Mode { NONE = 0, PART8 = 1, SECTOR = 2, WHOLE = 3 };

__device__ void store_pass(double* a, long lines, int mode, int second) {
  double v = 1.0 + second;
  if (mode == WHOLE) {
    for (long j = threadIdx.x; j < lines * 16; j += blockDim.x) a[j] = v;
  } else if (mode == SECTOR) {
    for (long j = threadIdx.x; j < lines * 4; j += blockDim.x) a[(j / 4) * 16 + second * 4 + j % 4] = v;
  } else {
    for (long j = threadIdx.x; j < lines; j += blockDim.x) a[j * 16 + second] = v;
  }
}

__global__ void probe(double* __restrict__ a, long lines, int mode, unsigned sm_a, unsigned sm_b,
                      int together, volatile unsigned* flag, unsigned* sm_of) {
  extern __shared__ double pad[];
  unsigned s = smid();
  if (threadIdx.x == 0) sm_of[blockIdx.x] = s;
  if (mode == NONE || (s != sm_a && s != sm_b)) return;
  if (s == sm_a) {
    store_pass(a, lines, mode, 0);
    if (sm_a == sm_b) { __syncthreads(); store_pass(a, lines, mode, 1); return; }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicExch((unsigned*)flag, 1u);
    return;
  }
  if (threadIdx.x == 0 && !together) while (*flag == 0) {}
  __syncthreads();
  store_pass(a, lines, mode, 1);
  (void)pad;
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: store_pair_probe LAUNCHES_FILE\n"); return 2; }
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long lines = 8192; // 1 MiB
  double* a; unsigned *sm_of, *flag;
  CK(cudaMalloc(&a, lines * 128)); CK(cudaMalloc(&sm_of, 4096 * 4)); CK(cudaMalloc(&flag, 4));
  CK(cudaMemset(a, 0, lines * 128));
  int smem = 120 * 1024;
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  FILE* f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 2; }
  printf("id,mode,sm_a,sm_b,together,found\n");
  const char* names[] = {"none", "part8", "sector", "whole"};
  char line[256], mode_name[32], extra[32];
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    int sa, sb;
    extra[0] = 0;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %31s", mode_name, &sa, &sb, extra) < 3) continue;
    int together = !strcmp(extra, "together");
    int mode = -1;
    for (int m = 0; m < 4; m++) if (!strcmp(mode_name, names[m])) mode = m;
    if (mode < 0) { fprintf(stderr, "unknown mode %s\n", mode_name); return 2; }
    if (sa < 0 || sa >= sms || sb < 0 || sb >= sms) { fprintf(stderr, "SM out of range\n"); return 2; }
    CK(cudaMemset(flag, 0, 4));
    probe<<<sms, 256, smem>>>(a, lines, mode, (unsigned)sa, (unsigned)sb, together, flag, sm_of);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned h[4096];
    CK(cudaMemcpy(h, sm_of, sms * 4, cudaMemcpyDeviceToHost));
    int fa = 0, fb = 0;
    for (int b = 0; b < sms; b++) { fa |= h[b] == (unsigned)sa; fb |= h[b] == (unsigned)sb; }
    printf("%d,%s,%d,%d,%d,%d\n", id++, mode_name, sa, sb, together, fa && fb);
  }
  return 0;
}
