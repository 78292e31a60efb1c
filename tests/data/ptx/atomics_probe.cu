// Global atomics at the L1 and the L2: requests, sectors, L2 red/atom counters and DRAM traffic of
// atomicAdd patterns whose result is unused (compiled to RED) and used (ATOM).
// Each config line: kernel n bx (1-D grid of cdiv(n, bx) blocks, i = blockIdx.x*blockDim.x +
// threadIdx.x, guarded by i < n). Kernels:
//   red_distinct a[i]   red_same a[0]   red_warp_same a[i/32]   red_stride2 a[2i]   red_stride8 a[8i]
//   red_stride32 a[32i]   red_bins7 a[(7i)%256]   red_half a[i] for even i only
//   atom_distinct old = atomicAdd(&a[i], 1); b[i] = old   red_f64_distinct atomicAdd(&d[i], 1.0)
// a holds 32*n ints (room for red_stride32; n at most 4194304), b n ints, d n doubles, all zeroed
// once. Read with ncu (validation/new_kernels.sh); data in tests/data/h100/micro/atomics/.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
#define I int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
__global__ void red_distinct(int* a, int n) { I atomicAdd(&a[i], 1); }
__global__ void red_same(int* a, int n) { I atomicAdd(&a[0], 1); }
__global__ void red_warp_same(int* a, int n) { I atomicAdd(&a[i / 32], 1); }
__global__ void red_stride2(int* a, int n) { I atomicAdd(&a[2 * i], 1); }
__global__ void red_stride8(int* a, int n) { I atomicAdd(&a[8 * i], 1); }
__global__ void red_stride32(int* a, int n) { I atomicAdd(&a[32 * i], 1); }
__global__ void red_bins7(int* a, int n) { I atomicAdd(&a[(7 * i) % 256], 1); }
__global__ void red_half(int* a, int n) { I if (i % 2 == 0) atomicAdd(&a[i], 1); }
__global__ void atom_distinct(int* a, int* b, int n) { I int old = atomicAdd(&a[i], 1); b[i] = old; }
__global__ void red_f64_distinct(double* d, int n) { I atomicAdd(&d[i], 1.0); }
int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: atomics_probe LAUNCHES\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  const long nmax = 4194304; int *a, *b; double* d; char line[256];
  CK(cudaMalloc(&a, 32 * nmax * sizeof(int))); CK(cudaMalloc(&b, nmax * sizeof(int))); CK(cudaMalloc(&d, nmax * sizeof(double)));
  CK(cudaMemset(a, 0, 32 * nmax * sizeof(int))); CK(cudaMemset(b, 0, nmax * sizeof(int))); CK(cudaMemset(d, 0, nmax * sizeof(double)));
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[32]; int n, bx;
    if (line[0] == '#' || sscanf(line, "%31s %d %d", k, &n, &bx) < 3) continue;
    if (n > nmax) { printf("n > %ld\n", nmax); return 1; }
    dim3 b1(bx), g((n + bx - 1) / bx); bool ok = true;
    if (!strcmp(k, "red_distinct")) red_distinct<<<g, b1>>>(a, n);
    else if (!strcmp(k, "red_same")) red_same<<<g, b1>>>(a, n);
    else if (!strcmp(k, "red_warp_same")) red_warp_same<<<g, b1>>>(a, n);
    else if (!strcmp(k, "red_stride2")) red_stride2<<<g, b1>>>(a, n);
    else if (!strcmp(k, "red_stride8")) red_stride8<<<g, b1>>>(a, n);
    else if (!strcmp(k, "red_stride32")) red_stride32<<<g, b1>>>(a, n);
    else if (!strcmp(k, "red_bins7")) red_bins7<<<g, b1>>>(a, n);
    else if (!strcmp(k, "red_half")) red_half<<<g, b1>>>(a, n);
    else if (!strcmp(k, "atom_distinct")) atom_distinct<<<g, b1>>>(a, b, n);
    else if (!strcmp(k, "red_f64_distinct")) red_f64_distinct<<<g, b1>>>(d, n);
    else ok = false;
    if (!ok) { printf("unknown kernel %s\n", k); return 1; }
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
}
