// How long a round of n independent loads takes, against n: the shape of the time model's delay
// per round (`[timing] loaded_latency_factor` and `latency_spread_factor`, docs/model.md "Time").
// A round ends when its slowest load returns; if each load's latency is a fixed part plus a spread,
// the expected slowest of n grows with the harmonic number H(n), where a fixed issue cost per
// load would grow with n.
//
// W warps per SM (132 x W blocks of 32 threads, all resident at once) each run R dependent rounds:
// a round issues n loads of 32 consecutive 4-byte words (one 128-byte line per warp load) at
// addresses hashed from the round's start, then adds them; the sum picks the next round's start,
// so rounds are dependent and loads within a round are not. The array is 4 GiB of random words
// (far beyond the 50-60 MiB L2: every load misses L1 and L2). Timed by CUDA events around the
// launch, at whatever clock the GPU runs (reported by nvidia-smi in round_latency.sh).
//
//   round_latency OUT.csv     columns: warps_per_sm, n, rounds, ms, ns_per_round
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)

static const uint64_t WORDS = 1ull << 30;  // 4 GiB of 32-bit words

// The round's lines: one hash of its start, then lines 40503 apart (different DRAM pages), so that
// issuing a load costs one add and a mask, as a stencil's address does.
__device__ __forceinline__ uint64_t first_line(uint64_t start) {
  return ((start * 0xBF58476D1CE4E5B9ull) >> 20) & (WORDS / 32 - 1);
}

template <int N>
__global__ void rounds(const uint32_t* __restrict__ a, uint32_t* out, int r) {
  int lane = threadIdx.x & 31;
  uint64_t start = blockIdx.x * 7919ull + 1;
  uint32_t s = 0;
  for (int k = 0; k < r; k++) {
    uint32_t v[N];
    const uint32_t* base = a + lane;
    uint64_t line = first_line(start);
#pragma unroll
    for (int i = 0; i < N; i++) v[i] = __ldcg(base + ((line + 40503ull * i) & (WORDS / 32 - 1)) * 32);
    uint32_t t = 0;
#pragma unroll
    for (int i = 0; i < N; i++) t += v[i];
    // every lane of the warp continues from the same start: its lane 0's sum
    start = start * 6364136223846793005ull + __shfl_sync(0xffffffffu, t, 0);
    s += t;
  }
  if (s == 0x12345678u) out[blockIdx.x] = s;
}

template <int N>
float run(const uint32_t* a, uint32_t* out, int warps, int r) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  rounds<N><<<132 * warps, 32>>>(a, out, 4);  // warm-up: TLB, clocks
  CK(cudaDeviceSynchronize());
  CK(cudaEventRecord(e0));
  rounds<N><<<132 * warps, 32>>>(a, out, r);
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  return ms;
}

__global__ void fill(uint32_t* a) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < WORDS; i += (uint64_t)gridDim.x * blockDim.x)
    a[i] = (uint32_t)((i * 0x9E3779B97F4A7C15ull) >> 33);
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: round_latency OUT.csv\n"); return 2; }
  FILE* f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  uint32_t *a, *out;
  CK(cudaMalloc(&a, WORDS * 4)); CK(cudaMalloc(&out, 132 * 64 * 4));
  fill<<<132 * 8, 256>>>(a);
  CK(cudaDeviceSynchronize());
  fprintf(f, "warps_per_sm,n,rounds,ms,ns_per_round\n");
  const int r = 2000;
  for (int warps : {1, 2, 4, 8}) {
    float ms[12];
    ms[0] = run<1>(a, out, warps, r);  ms[1] = run<2>(a, out, warps, r);  ms[2] = run<3>(a, out, warps, r);
    ms[3] = run<4>(a, out, warps, r);  ms[4] = run<6>(a, out, warps, r);  ms[5] = run<8>(a, out, warps, r);
    ms[6] = run<12>(a, out, warps, r); ms[7] = run<16>(a, out, warps, r); ms[8] = run<20>(a, out, warps, r);
    ms[9] = run<25>(a, out, warps, r); ms[10] = run<28>(a, out, warps, r); ms[11] = run<32>(a, out, warps, r);
    const int ns[12] = {1, 2, 3, 4, 6, 8, 12, 16, 20, 25, 28, 32};
    for (int i = 0; i < 12; i++)
      fprintf(f, "%d,%d,%d,%.4f,%.2f\n", warps, ns[i], r, ms[i], ms[i] * 1e6 / r);
  }
  fclose(f);
  printf("wrote %s\n", argv[1]);
  return 0;
}
