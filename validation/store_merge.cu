// When do a warp's stores to one line reach the L2 as one write? (docs/model.md "A warp's stores
// in a row merge"; measured by validation/store_merge.sh.) Every kernel below writes the even
// and the odd floats of a 256-byte segment (8 sectors) a warp, or of one segment a pair of warps,
// so the L2 counts 8 write sectors a segment where the two halves merge and 16 where they do not
// (the L1 counts 16 either way). The kernels differ in what comes between the two halves:
//   pair_row      nothing: out[2i] = a; out[2i + 1] = b (two STG.32 in a row)
//   pair_alu      a chain of p2 dependent FMAs that the second value needs
//   pair_gap      a read of the clock and p2 dependent FMAs, unrolled (p2 in 0, 1, 2, 4, 8, 16;
//                 p2 = -1: one FMA and no clock)
//   pair_load     a load of another array (the arrays may alias, so the order stays)
//   pair_store    a store to another array's line
//   pair_sync     __syncthreads()
//   pair_warps    nothing, but the halves are two warps' p2 apart (of each 2 p2 warps the first
//                 p2 write the even floats of p2 segments, the next p2 the odd ones)
//   half_only     the even floats alone (8 partly written sectors a segment: the reference)
// Each config line: kernel n p2 1 bx 1 1 (p2: the chain or the warps' distance), n threads (n floats' pairs: out holds 2n floats).
// Every launch gets freshly cudaMalloc'd, zeroed arrays, so ncu's ID i is the i-th config line.
// Prints "ID line" per launch.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
static int cdiv(long a, int b) { return (int)((a + b - 1) / b); }

__global__ void pair_row(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[2 * i] = (float)i;
    out[2 * i + 1] = (float)(i + 1);
  }
}

__global__ void pair_alu(float* out, int n, int chain) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float a = (float)i;
    out[2 * i] = a;
    float b = a;
    for (int k = 0; k < chain; k++) b = b * 0.999f + 1.0f;
    out[2 * i + 1] = b;
  }
}

// The second value G dependent FMAs after the first. ptxas sinks the first store to the second
// unless something keeps it in place: with CLOCK a read of the clock (S2UR SR_CLOCKLO, its bit 0
// converted and added: 4-5 instructions) between them does, and the FMAs follow it; without,
// G = 1 compiles to STG, FFMA, STG.
template <int G, bool CLOCK>
__global__ void pair_gap(float* out, int n, float m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float a = (float)i;
    out[2 * i] = a;
    float b = a;
    if (CLOCK) b += (float)(clock() & 1);
#pragma unroll
    for (int k = 0; k < G; k++) b = b * m + 1.0f;
    out[2 * i + 1] = b;
  }
}

__global__ void pair_load(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[2 * i] = (float)i;
    out[2 * i + 1] = in[i];
  }
}

__global__ void pair_store(float* out, float* other, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[2 * i] = (float)i;
    other[i] = (float)(i + 2);
    out[2 * i + 1] = (float)(i + 1);
  }
}

__global__ void pair_sync(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[2 * i] = (float)i;
  __syncthreads();
  if (i < n) out[2 * i + 1] = (float)(i + 1);
}

__global__ void pair_warps(float* out, int n, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int warp = i / 32, lane = i % 32;
  int group = warp / (2 * d), r = warp % (2 * d);
  int segment = group * d + r % d, half = r / d;
  if (i < n) out[64 * segment + 2 * lane + half] = (float)i;
}

__global__ void half_only(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[2 * i] = (float)i;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: store_merge LAUNCHES\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 2;
  }
  char line[256], name[64];
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    long n, chain, p3;
    int bx, by, bz;
    if (sscanf(line, "%63s %ld %ld %ld %d %d %d", name, &n, &chain, &p3, &bx, &by, &bz) != 7) {
      fprintf(stderr, "bad line: %s", line);
      return 2;
    }
    float *out, *in;
    CK(cudaMalloc(&out, 2 * n * 4)); CK(cudaMalloc(&in, n * 4));
    CK(cudaMemset(out, 0, 2 * n * 4)); CK(cudaMemset(in, 0, n * 4));
    int grid = cdiv(n, bx);
    if (!strcmp(name, "pair_row")) pair_row<<<grid, bx>>>(out, (int)n);
    else if (!strcmp(name, "pair_alu")) pair_alu<<<grid, bx>>>(out, (int)n, (int)chain);
    else if (!strcmp(name, "pair_gap")) {
      // p2: the FMAs; p2 = -1: one FMA, no clock
      switch (chain) {
        case -1: pair_gap<1, false><<<grid, bx>>>(out, (int)n, 0.999f); break;
        case 0: pair_gap<0, true><<<grid, bx>>>(out, (int)n, 0.999f); break;
        case 1: pair_gap<1, true><<<grid, bx>>>(out, (int)n, 0.999f); break;
        case 2: pair_gap<2, true><<<grid, bx>>>(out, (int)n, 0.999f); break;
        case 4: pair_gap<4, true><<<grid, bx>>>(out, (int)n, 0.999f); break;
        case 8: pair_gap<8, true><<<grid, bx>>>(out, (int)n, 0.999f); break;
        case 16: pair_gap<16, true><<<grid, bx>>>(out, (int)n, 0.999f); break;
        default: fprintf(stderr, "pair_gap takes p2 in -1, 0, 1, 2, 4, 8, 16\n"); return 2;
      }
    } else if (!strcmp(name, "pair_load")) pair_load<<<grid, bx>>>(out, in, (int)n);
    else if (!strcmp(name, "pair_store")) pair_store<<<grid, bx>>>(out, in, (int)n);
    else if (!strcmp(name, "pair_sync")) pair_sync<<<grid, bx>>>(out, (int)n);
    else if (!strcmp(name, "pair_warps")) pair_warps<<<grid, bx>>>(out, (int)n, (int)chain);
    else if (!strcmp(name, "half_only")) half_only<<<grid, bx>>>(out, (int)n);
    else {
      fprintf(stderr, "unknown kernel %s\n", name);
      return 2;
    }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaFree(out)); CK(cudaFree(in));
    line[strcspn(line, "\n")] = 0;
    printf("%d %s\n", id++, line);
  }
  return 0;
}
