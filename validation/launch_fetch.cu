// What a launch reads from DRAM beyond its data: every measured launch reads 88-500 sectors more
// than the simulation gives where its data traffic is exact (docs/data/validation-*.json; the
// atomics probe's launches, whose data are 2-512 sectors, read 92-112 more). Presumably the
// kernel's code and constant bank, fetched through the L2 after ncu's cache flush. Kernels here
// touch no data but one word stored under a condition that never holds (a comparison with a
// parameter, -1 at run time):
//   k_empty:      threadIdx.x only
//   k_codeN:      a dependent chain of N multiply-adds, unrolled (about N SASS instructions, 16
//                 bytes each): the code's size
//   k_params:     k_empty with 1 KiB of parameters (the constant bank)
// each in launches of 1, 132 and 2112 blocks of 256 threads. Run by launch_fetch.sh under ncu at
// base clocks, with the default cache control (flush all before each pass) and with none; data
// in tests/data/h200/launch_fetch/.
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void k_empty(float* out, int key) {
  if ((int)threadIdx.x == key) out[0] = 1.0f;
}

template <int N>
__global__ void k_code(float* out, int key) {
  float v = threadIdx.x;
  float a = key * 0.5f;
#pragma unroll
  for (int i = 0; i < N; i++) v = v * a + (float)(i & 7);
  if (v == key) out[0] = v;
}

struct Big { float v[256]; };
__global__ void k_params(float* out, int key, Big big) {
  if ((int)threadIdx.x == key) out[0] = big.v[threadIdx.x & 255];
}

int main() {
  float* out;
  CK(cudaMalloc(&out, 4096));
  int key = -1;
  Big big;
  for (int i = 0; i < 256; i++) big.v[i] = i;
  int grids[3] = {1, 132, 2112};
  for (int g : grids) {
    k_empty<<<g, 256>>>(out, key);
    k_code<256><<<g, 256>>>(out, key);
    k_code<1024><<<g, 256>>>(out, key);
    k_code<4096><<<g, 256>>>(out, key);
    k_code<16384><<<g, 256>>>(out, key);
    k_params<<<g, 256>>>(out, key, big);
    CK(cudaDeviceSynchronize());
  }
  CK(cudaGetLastError());
  printf("ok\n");
  return 0;
}
