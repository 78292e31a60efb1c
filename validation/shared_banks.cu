// Shared-memory bank rule probe: one warp (one block of 32 threads) issues REPS shared loads or
// stores of one width (4, 8 or 16 bytes) with a lane -> element index pattern, for each config line.
// ncu's shared wavefront and bank-conflict counters per launch, divided by REPS, give the data-pipe
// wavefronts of one warp instruction. Config line: op width pattern arg active
//   op: ld | st    width: 1 | 2 | 4 | 8 | 16
//   pattern: stride  (index = lane * arg)
//            group   (index = lane / arg: arg lanes share an element, i.e. broadcast)
//            mod     (index = lane % arg: lanes arg apart share an element)
//            perm    (index = (lane * arg) % 32)
//            xor     (index = lane ^ arg)
//            pad     (index = (lane % 8) * arg + lane / 8: a 2-D tile read down columns)
//            quad0   (index = lane % arg for lanes 0..3, 0 for the rest: one quad reads arg elements)
//            first   (index = lane for lanes below arg, 0 for the rest)
//   active: lanes 0..active-1 take part (the others skip the access)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
#define REPS 64
#define WORDS 8192  // 32 KiB of shared memory
enum { STRIDE, GROUP, MOD, PERM, XOR, PAD, QUAD0, FIRST };

__device__ __forceinline__ int pattern_index(int lane, int pattern, int arg) {
  switch (pattern) {
    case STRIDE: return lane * arg;
    case GROUP: return lane / arg;
    case MOD: return lane % arg;
    case PERM: return (lane * arg) % 32;
    case XOR: return lane ^ arg;
    case PAD: return (lane % 8) * arg + lane / 8;
    case QUAD0: return lane < 4 ? lane % arg : 0;
    default: return lane < arg ? lane : 0;
  }
}

// Inline PTX so that each access is exactly one LDS/STS of the width asked for, never merged or
// dropped (volatile asm with a memory clobber).
template <int W>
__device__ __forceinline__ float shared_load(unsigned addr) {
  unsigned a, b, c, d;
  if (W == 1) { asm volatile("ld.shared.u8 %0, [%1];" : "=r"(a) : "r"(addr) : "memory"); return __uint_as_float(a); }
  if (W == 2) { asm volatile("ld.shared.u16 %0, [%1];" : "=r"(a) : "r"(addr) : "memory"); return __uint_as_float(a); }
  if (W == 4) { asm volatile("ld.shared.u32 %0, [%1];" : "=r"(a) : "r"(addr) : "memory"); return __uint_as_float(a); }
  if (W == 8) { asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr) : "memory"); return __uint_as_float(a ^ b); }
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr) : "memory");
  return __uint_as_float(a ^ b ^ c ^ d);
}
template <int W>
__device__ __forceinline__ void shared_store(unsigned addr, unsigned v) {
  if (W == 1) asm volatile("st.shared.u8 [%0], %1;" :: "r"(addr), "r"(v) : "memory");
  else if (W == 2) asm volatile("st.shared.u16 [%0], %1;" :: "r"(addr), "r"(v) : "memory");
  else if (W == 4) asm volatile("st.shared.u32 [%0], %1;" :: "r"(addr), "r"(v) : "memory");
  else if (W == 8) asm volatile("st.shared.v2.u32 [%0], {%1, %1};" :: "r"(addr), "r"(v) : "memory");
  else asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" :: "r"(addr), "r"(v) : "memory");
}

template <int W>
__global__ void probe_ld(int pattern, int arg, int active, float* out) {
  __shared__ __align__(16) unsigned int smem[WORDS];
  int lane = threadIdx.x;
  unsigned addr = (unsigned)__cvta_generic_to_shared(smem) + pattern_index(lane, pattern, arg) * W;
  float acc = 0;
  if (lane < active) {
#pragma unroll 1
    for (int r = 0; r < REPS; r++) acc += shared_load<W>(addr);
  }
  if (acc == 12345.0f) out[lane] = acc;  // keeps the loads' results live
}

template <int W>
__global__ void probe_st(int pattern, int arg, int active, float* out) {
  __shared__ __align__(16) unsigned int smem[WORDS];
  int lane = threadIdx.x;
  unsigned addr = (unsigned)__cvta_generic_to_shared(smem) + pattern_index(lane, pattern, arg) * W;
  if (lane < active) {
#pragma unroll 1
    for (int r = 0; r < REPS; r++) shared_store<W>(addr, lane);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: shared_banks CONFIGS\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  float* out; CK(cudaMalloc(&out, 32 * sizeof(float))); CK(cudaMemset(out, 0, 32 * sizeof(float)));
  char line[256], op[8], pat[16]; int width, arg, active, id = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || sscanf(line, "%7s %d %15s %d %d", op, &width, pat, &arg, &active) < 5) continue;
    int p = !strcmp(pat, "stride") ? STRIDE : !strcmp(pat, "group") ? GROUP : !strcmp(pat, "mod") ? MOD
          : !strcmp(pat, "perm") ? PERM : !strcmp(pat, "xor") ? XOR : !strcmp(pat, "pad") ? PAD
          : !strcmp(pat, "quad0") ? QUAD0 : !strcmp(pat, "first") ? FIRST : -1;
    if (p < 0) { printf("unknown pattern %s\n", pat); return 1; }
    bool ld = !strcmp(op, "ld");
    if (width == 1) { if (ld) probe_ld<1><<<1, 32>>>(p, arg, active, out); else probe_st<1><<<1, 32>>>(p, arg, active, out); }
    else if (width == 2) { if (ld) probe_ld<2><<<1, 32>>>(p, arg, active, out); else probe_st<2><<<1, 32>>>(p, arg, active, out); }
    else if (width == 4) { if (ld) probe_ld<4><<<1, 32>>>(p, arg, active, out); else probe_st<4><<<1, 32>>>(p, arg, active, out); }
    else if (width == 8) { if (ld) probe_ld<8><<<1, 32>>>(p, arg, active, out); else probe_st<8><<<1, 32>>>(p, arg, active, out); }
    else if (width == 16) { if (ld) probe_ld<16><<<1, 32>>>(p, arg, active, out); else probe_st<16><<<1, 32>>>(p, arg, active, out); }
    else { printf("bad width %d\n", width); return 1; }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("ID %d %s %d %s %d %d\n", id++, op, width, pat, arg, active);
  }
  return 0;
}
