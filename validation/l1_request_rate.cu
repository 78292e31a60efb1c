// How many load requests and data-stage wavefronts an SM's L1 serves per cycle when every load
// hits (issue 53: the naive matrix product's wide blocks run at 0.75-0.84 requests and
// wavefronts per SM cycle, one wavefront a request, where the time model's L1 limiter allows
// one wavefront per cycle, and are predicted 6-20 % fast; no other launch on record exceeds
// 0.65 requests per cycle). Every warp issues `iters` rounds of 8 independent loads (ld.global,
// cached in L1) from one 32 KiB array that all warps share, so that after the first touches
// every load hits; the 8 sums are stored only if impossible. The pattern sets what one load
// instruction (one request) asks for:
//   0 coalesced floats     lane l reads word l of a line: 1 line, 4 sectors
//   1 broadcast float      every lane the same word: 1 sector
//   2 coalesced doubles    2 lines (each converted to a float: one F2F.F32.F64 a load)
//   3 coalesced float4     4 lines
//   4 gemm-like            the even loads broadcast, the odd ones coalesced floats of the next
//                          slot (a pair on lines 256 bytes apart)
//   5 floats 2 apart       lane l reads word 2l: 2 lines, 8 sectors
//   6, 7                   0 and 1 with two FMAs a load: the issue slots shared with other work
//   8                      two broadcasts, then two coalesced loads
//   9                      gemm-like, the broadcast and the coalesced load of a pair on the
//                          same line
//   10                     coalesced doubles summed as doubles (no conversion)
// Patterns 8 and 9 compile to more instructions a load (3.5-3.6 issued a cycle: near the issue
// limit), so they do not isolate the L1.
//   l1_request_rate LAUNCHES   (lines "PATTERN WARPS_PER_BLOCK BLOCKS_PER_SM ITERS"; the grid is
//                               BLOCKS_PER_SM blocks for each SM; prints "ID line" per launch)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1;} } while (0)

// 32 KiB: 256 lines of 128 bytes.
#define ARRAY_BYTES 32768

__device__ __forceinline__ float ldf(const float* p) {
  float r; asm volatile("ld.global.f32 %0, [%1];" : "=f"(r) : "l"(p)); return r;
}
__device__ __forceinline__ double ldd(const double* p) {
  double r; asm volatile("ld.global.f64 %0, [%1];" : "=d"(r) : "l"(p)); return r;
}
__device__ __forceinline__ float ldf4(const float4* p) {
  float x, y, z, w;
  asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "l"(p));
  return x + y + z + w;
}

// Load u of round `it` reads slot u of group it mod 16 of the array (slots of 256 bytes, groups
// of 8 slots; float4 slots of 512 bytes, wrapped into the 32 KiB): the group's base is one
// address a round, each load an immediate offset from it, so that a load costs one instruction
// and its add one more.
template <int PATTERN>
__device__ __forceinline__ float load(const char* g, int u, int lane) {
  const char* p = g + u * 256;
  if (PATTERN == 0 || PATTERN == 6) return ldf((const float*)p + lane);
  if (PATTERN == 1 || PATTERN == 7) return ldf((const float*)p);
  if (PATTERN == 2) return (float)ldd((const double*)p + lane);
  if (PATTERN == 3) return ldf4((const float4*)(g + u * 512) + lane);
  if (PATTERN == 4) return (u & 1) ? ldf((const float*)p + lane) : ldf((const float*)p);
  if (PATTERN == 8) return (u & 2) ? ldf((const float*)p + lane) : ldf((const float*)p);
  if (PATTERN == 9) return (u & 1) ? ldf((const float*)(p - 256) + lane) : ldf((const float*)p);
  return ldf((const float*)p + 2 * lane);  // PATTERN 5: words 0, 2, ..., 62
}

template <int PATTERN>
__global__ void __launch_bounds__(256, 8) hits(const char* __restrict__ a, float* __restrict__ sink, int iters) {
  const int lane = threadIdx.x & 31;
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int it = 0; it < iters; it++) {
    const char* g = a + (PATTERN == 3 ? (it & 7) * 4096 : (it & 15) * 2048);
#pragma unroll
    for (int u = 0; u < 8; u++) {
      float v = load<PATTERN>(g, u, lane);
      if (PATTERN >= 6) {
        v = v * 1.0001f + 0.5f;
        v = v * 0.9999f + 0.25f;
      }
      s[u] += v;
    }
  }
  float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  if (t == -1.2345f) sink[blockIdx.x * blockDim.x + threadIdx.x] = t;
}

// Pattern 10: coalesced doubles (2 lines) summed as doubles, so that no conversion follows the
// load (pattern 2 converts each to a float: an F2F.F32.F64 a load).
__global__ void __launch_bounds__(256, 8) hits_f64(const char* __restrict__ a, double* __restrict__ sink, int iters) {
  const int lane = threadIdx.x & 31;
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int it = 0; it < iters; it++) {
    const char* g = a + (it & 15) * 2048;
#pragma unroll
    for (int u = 0; u < 8; u++) s[u] += ldd((const double*)(g + u * 256) + lane);
  }
  double t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  if (t == -1.2345) sink[blockIdx.x * blockDim.x + threadIdx.x] = t;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: l1_request_rate LAUNCHES\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 2;
  }
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  char* a;
  float* sink;
  CK(cudaMalloc(&a, 2 * ARRAY_BYTES));
  CK(cudaMemset(a, 0, 2 * ARRAY_BYTES));
  CK(cudaMalloc(&sink, 64L * 1024 * 1024));
  char line[256];
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    int pattern, warps, per_sm, iters;
    if (sscanf(line, "%d %d %d %d", &pattern, &warps, &per_sm, &iters) != 4) {
      fprintf(stderr, "bad line: %s", line);
      return 2;
    }
    dim3 grid(sms * per_sm), block(32 * warps);
    switch (pattern) {
      case 0: hits<0><<<grid, block>>>(a, sink, iters); break;
      case 1: hits<1><<<grid, block>>>(a, sink, iters); break;
      case 2: hits<2><<<grid, block>>>(a, sink, iters); break;
      case 3: hits<3><<<grid, block>>>(a, sink, iters); break;
      case 4: hits<4><<<grid, block>>>(a, sink, iters); break;
      case 5: hits<5><<<grid, block>>>(a, sink, iters); break;
      case 6: hits<6><<<grid, block>>>(a, sink, iters); break;
      case 7: hits<7><<<grid, block>>>(a, sink, iters); break;
      case 8: hits<8><<<grid, block>>>(a, sink, iters); break;
      case 9: hits<9><<<grid, block>>>(a, sink, iters); break;
      case 10: hits_f64<<<grid, block>>>(a, (double*)sink, iters); break;
      default: fprintf(stderr, "unknown pattern %d\n", pattern); return 2;
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    line[strcspn(line, "\n")] = 0;
    printf("%d %s\n", id++, line);
  }
  return 0;
}
