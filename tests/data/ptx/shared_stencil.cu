// A shared-memory stencil: jacobi2d (float 5-point, 2-D, in/out (nx+2) x (ny+2) with pitch nx+2, as
// in new_kernels.cu) staged through a (blockDim.x+2) x (blockDim.y+2) tile of dynamic shared memory:
// every thread stores its centre, edge threads the halo, one __syncthreads, then five shared loads.
// Config line: nx ny bx by. Fresh zeroed arrays per launch; ncu's ID i is the i-th config line.
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
__global__ void jacobi2d_shared(const float* in, float* out, int nx, int ny) {
  extern __shared__ float tile[];
  int pitch = nx + 2, tp = blockDim.x + 2;
  int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  bool inside = x <= nx && y <= ny;
  int c = y * pitch + x;
  if (inside) {
    tile[ty * tp + tx] = in[c];
    if (threadIdx.x == 0) tile[ty * tp] = in[c - 1];
    if (threadIdx.x == blockDim.x - 1 || x == nx) tile[ty * tp + tx + 1] = in[c + 1];
    if (threadIdx.y == 0) tile[tx] = in[c - pitch];
    if (threadIdx.y == blockDim.y - 1 || y == ny) tile[(ty + 1) * tp + tx] = in[c + pitch];
  }
  __syncthreads();
  if (inside)
    out[c] = 0.2f * (tile[ty * tp + tx] + tile[ty * tp + tx - 1] + tile[ty * tp + tx + 1] +
                     tile[(ty - 1) * tp + tx] + tile[(ty + 1) * tp + tx]);
}
int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: shared_stencil LAUNCHES\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  char line[256]; int nx, ny, bx, by, id = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || sscanf(line, "%d %d %d %d", &nx, &ny, &bx, &by) < 4) continue;
    size_t bytes = (size_t)(nx + 2) * (ny + 2) * sizeof(float);
    float *in, *out; CK(cudaMalloc(&in, bytes)); CK(cudaMalloc(&out, bytes));
    CK(cudaMemset(in, 0, bytes)); CK(cudaMemset(out, 0, bytes));
    size_t smem = (size_t)(bx + 2) * (by + 2) * sizeof(float);
    jacobi2d_shared<<<dim3((nx + bx - 1) / bx, (ny + by - 1) / by), dim3(bx, by), smem>>>(in, out, nx, ny);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("ID %d jacobi2d_shared %d %d %d %d\n", id++, nx, ny, bx, by);
    CK(cudaFree(in)); CK(cudaFree(out));
  }
  return 0;
}
