// Which SMs share a GPC, from thread block clusters: the blocks of one cluster are guaranteed to
// run on SMs of one GPC, so SMs that ever host blocks of the same cluster belong together. One
// block per SM at a time (the shared memory allows no second), clusters of 2 blocks (any GPC's TPC
// pair or two SMs of it), many clusters; union of the SMs per cluster.
//   nvcc -O3 -arch=sm_90 -o gpc_map gpc_map.cu && ./gpc_map > gpc_map.csv
// Output: sm,gpc (the GPC's smallest SM id), then on stderr one line per GPC.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }

__global__ void where(unsigned* sm_of, int spin) {
  extern __shared__ char pad[];
  if (threadIdx.x == 0) {
    sm_of[blockIdx.x] = smid();
    long long t = clock64();
    while (clock64() - t < spin) {}
    if (spin < 0) pad[0] = 1;
  }
}

static int find(std::vector<int>& p, int x) { while (p[x] != x) x = p[x] = p[p[x]]; return x; }

int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<int> parent(sms);
  for (int i = 0; i < sms; i++) parent[i] = i;
  int smem = 120 * 1024;
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const int blocks = 64 * 1024;
  unsigned* d; CK(cudaMalloc(&d, blocks * 4));
  std::vector<unsigned> h(blocks);
  for (int size : {2, 4, 8, 16}) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks / size * size); cfg.blockDim = dim3(32); cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = size; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr; cfg.numAttrs = 1;
    int max_clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&max_clusters, where, &cfg) != cudaSuccess || max_clusters == 0) {
      cudaGetLastError();
      fprintf(stderr, "cluster size %d: not launchable\n", size);
      continue;
    }
    for (int spin : {0, 2000, 20000}) {
      CK(cudaLaunchKernelEx(&cfg, where, d, spin));
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h.data(), d, blocks * 4, cudaMemcpyDeviceToHost));
      for (int c = 0; c + size <= blocks; c += size)
        for (int k = 1; k < size; k++) parent[find(parent, h[c + k])] = find(parent, h[c]);
    }
    fprintf(stderr, "cluster size %d: up to %d clusters resident\n", size, max_clusters);
  }
  std::vector<int> low(sms, sms);
  for (int i = 0; i < sms; i++) { int r = find(parent, i); if (i < low[r]) low[r] = i; }
  printf("sm,gpc\n");
  for (int i = 0; i < sms; i++) printf("%d,%d\n", i, low[find(parent, i)]);
  for (int r = 0; r < sms; r++) {
    if (find(parent, r) != r) continue;
    fprintf(stderr, "GPC of SM %d:", low[r]);
    for (int i = 0; i < sms; i++) if (find(parent, i) == r) fprintf(stderr, " %d", i);
    fprintf(stderr, "\n");
  }
  return 0;
}
