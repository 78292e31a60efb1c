// How much written data the L2 holds back before it writes it to DRAM (the dirty budget). The
// H100's store-merge kernels (128 MiB and 64 MiB written, nothing read) end with 21.5 MiB of
// their stores not yet in DRAM, the H200's issue-bound fma_ilp (64 MiB) with 25.7 MiB: about
// 0.43 of either L2, where an L2 that writes a line back only when it evicts it keeps all of it
// (50 and 60 MiB). `fill` writes a region of MiB MiB once or `passes` times over (blockIdx.y is
// the pass; the blocks of one pass are dispatched before the next's), `fill_half` the first 16
// bytes of each 32-byte sector of it. Under a budget, a region below it written four times goes
// to DRAM not at all, one above it by its excess at every pass; a rule of the lines' age would
// write back at every pass whatever the region.
// Lifted by the simulator from this file (entry = kernel name).
//   dirty_budget LAUNCHES   (lines "kernel MiB passes block"; prints "ID line" per launch)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

static const long MAX_MIB = 256;

__global__ void fill(float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = (float)(i + blockIdx.y);
}

__global__ void fill_half(float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int sector = i / 4, lane = i % 4;
  out[sector * 8 + lane] = (float)(i + blockIdx.y);
}

typedef void (*Kernel)(float*);
struct Entry { const char* name; Kernel fn; int floats_per_thread; };
static const Entry kernels[] = {{"fill", fill, 1}, {"fill_half", fill_half, 2}};

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: dirty_budget LAUNCHES\n"); return 1; }
  FILE* fl = fopen(argv[1], "r");
  if (!fl) { printf("cannot open %s\n", argv[1]); return 1; }
  float* out;
  CK(cudaMalloc(&out, MAX_MIB << 20));
  CK(cudaMemset(out, 0, MAX_MIB << 20));
  char line[256]; int id = 0;
  while (fgets(line, sizeof line, fl)) {
    char k[32]; int mib, passes, block;
    if (line[0] == '#' || sscanf(line, "%31s %d %d %d", k, &mib, &passes, &block) < 4) continue;
    const Entry* e = 0;
    for (const Entry& c : kernels) if (!strcmp(c.name, k)) e = &c;
    if (!e) { printf("unknown kernel %s\n", k); return 1; }
    long threads = ((long)mib << 20) / 4 / e->floats_per_thread;
    if (mib > MAX_MIB || threads % block) { printf("bad launch: %s", line); return 1; }
    e->fn<<<dim3(threads / block, passes), block>>>(out);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
  CK(cudaFree(out));
  return 0;
}
