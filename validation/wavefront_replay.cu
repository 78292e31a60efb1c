// L1 data-stage wavefronts of loads under load: what `[l1] replay_block_loads` (fitted on
// 2026-11-29) and the crowded-lines term tried beside it (not shipped) stand for, measured
// directly (docs/model.md "Coalescer and L1"). Run by validation/wavefront_replay.sh, launches in
// validation/wavefront_replay_launches.txt and wavefront_replay_batch_launches.txt; H200 data of 2026-11-29
// in tests/data/h200/wavefront_replay (README.md there), summarised by validation/wavefront_replay_summary.py.
// The rows' line steps and the stencils' padded layout (2026-12-03): wavefront_replay_linestep_launches.txt
// and wavefront_replay_stencil_launches.txt, summarised by validation/wavefront_linestep.py.
//
// Each config line: kernel type n hit nx ny bx by pitch
//   kernel "streams": every thread loads n elements, one from each of n arrays (x + y * pitch),
//          sums them and stores only if the sum is impossible: n loads per warp of independent
//          addresses, all missing in L1 (hit = 0) or, with hit = 1, each array read twice, the
//          second load of a line an L1 hit. Each load waits for the one before (the running sum's
//          add waits on it, `#pragma unroll 1`): one load in flight per warp. Varying the warps
//          per block (bx * by / 32) against n tells whether the replays of loads that miss follow
//          the load instructions per block (the shipped min(1, loads per block / 8)), the warps
//          per block or the loads per warp.
//   kernel "batch": as "streams", but the n loads of a pass are issued together (n loads into
//          registers, then the sum): n loads in flight per warp.
//   kernel "rows": one load of a bx x by tile of one array whose rows are `pitch` elements
//          apart, starting n - 1 elements into each row (n = 1: at the row's start; n = 5 on
//          doubles: the stencils' padded layout, x + P with P = 4, rows then start 32 bytes into a
//          line): narrow tiles (bx = 1, 2, 4, 8 floats or doubles) touch many lines in few bank
//          passes ("crowded" lines, more than two per pass); pitch moves the rows' banks.
//          hit = 1 reads the tile twice (the second time from L1): whether crowded lines cost
//          on hits too, and how much per line. hit = h > 1 re-reads the tile shifted by h - 1
//          elements, in[c + h - 1] (h = 2: a stencil's x + 1 load after its x load; h = 9 on
//          doubles: the tile 64 bytes on, the other half of each line an 8-wide tile touches).
//   kernel "copyrows": the rows tile loaded and stored, n - 1 elements into each row as in "rows"
//          (hit unused; `k_copyrows` below): what the stores of narrow tiles cost
//          (validation/wavefront_replay_copyrows_launches.txt).
//   type: f32 or f64.
// The arrays are nx x ny elements of pitch `pitch` (pitch >= nx). The n arrays of "streams" and "batch" lie
// `stream` bytes apart: 64 MiB, or their largest array of the launch list rounded up to 2 MiB where that is more;
// "rows" reads one array, which may be larger (f64 at pitch > nx). Until 2026-11-29 every array had to fit in
// 64 MiB, and the first run (tests/data/h200/wavefront_replay) stopped at the first f64 rows line with pitch > nx.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)
static const long MIN_STREAM = 64L << 20;  // bytes between arrays, at least
template <typename T>
__global__ void k_streams(const T* __restrict__ in, T* __restrict__ out, int n, int hit, int nx, int ny, int pitch, long s) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  long c = (long)y * pitch + x;
  T v = 0;
  for (int r = 0; r <= hit; r++) {
#pragma unroll 1
    for (int i = 0; i < n; i++) v += in[c + i * s];
    __syncwarp();
  }
  if (v == (T)-12345) out[c] = v;
}
// "batch": as "streams", but the n loads of a pass are all issued before the first is used (N = n loads into
// registers, unrolled, then the sum), so a warp has n loads in flight; in "streams" each load waits for the one
// before (the sum's add waits on it: one load in flight per warp, as the SASS shows). The re-read's index,
// c + r * (hit - 1), keeps the compiler from merging it with the first pass.
template <typename T, int N>
__global__ void k_batch(const T* __restrict__ in, T* __restrict__ out, int hit, int nx, int ny, int pitch, long s) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  long c = (long)y * pitch + x;
  T v = 0;
#pragma unroll 1
  for (int r = 0; r <= hit; r++) {
    long o = c + (long)r * (hit - 1);
    T a[N];
#pragma unroll
    for (int i = 0; i < N; i++) a[i] = in[o + i * s];
#pragma unroll
    for (int i = 0; i < N; i++) v += a[i];
    __syncwarp();
  }
  if (v == (T)-12345) out[c] = v;
}
template <typename T>
void batch(dim3 g, dim3 b, const T* in, T* out, int n, int hit, int nx, int ny, int pitch, long s) {
  switch (n) {
    case 1: k_batch<T, 1><<<g, b>>>(in, out, hit, nx, ny, pitch, s); break;
    case 2: k_batch<T, 2><<<g, b>>>(in, out, hit, nx, ny, pitch, s); break;
    case 3: k_batch<T, 3><<<g, b>>>(in, out, hit, nx, ny, pitch, s); break;
    case 4: k_batch<T, 4><<<g, b>>>(in, out, hit, nx, ny, pitch, s); break;
    case 5: k_batch<T, 5><<<g, b>>>(in, out, hit, nx, ny, pitch, s); break;
    case 6: k_batch<T, 6><<<g, b>>>(in, out, hit, nx, ny, pitch, s); break;
    case 7: k_batch<T, 7><<<g, b>>>(in, out, hit, nx, ny, pitch, s); break;
    default: k_batch<T, 8><<<g, b>>>(in, out, hit, nx, ny, pitch, s); break;
  }
}
template <typename T>
__global__ void k_rows(const T* __restrict__ in, T* __restrict__ out, int n, int hit, int nx, int ny, int pitch) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  long c = (long)y * pitch + x + (n - 1);
  T v = in[c];
  // The re-read at c + hit - 1 (= c): written as in[c], nvcc merged it with the first load, and so did ptxas an
  // inline-PTX ld.global.nc of the same address (one load request per warp with hit = 1 in the runs of
  // 2026-11-29, tests/data/h200/wavefront_replay/README.md).
  if (hit) { __syncwarp(); v += in[c + hit - 1]; }
  if (v == (T)-12345) out[c] = v;
}
// "copyrows": the rows kernel's tile loaded and stored to the same place of `out` (hit unused): the
// stores' passes are the launch's wavefronts less its loads' (`..._mem_lgds_cmd_read`) and the 2
// per warp of the block index reads.
template <typename T>
__global__ void k_copyrows(const T* __restrict__ in, T* __restrict__ out, int n, int nx, int ny, int pitch) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  long c = (long)y * pitch + x + (n - 1);
  out[c] = in[c];
}
int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: wavefront_replay LAUNCHES\n"); return 1; }
  FILE* f = fopen(argv[1], "r"); char line[256];
  if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  // First pass: the spacing of the streams' arrays and the largest array of the list.
  long stream = MIN_STREAM, largest = 0;
  while (fgets(line, sizeof line, f)) {
    char k[16], t[8]; int n, hit, nx, ny, bx, by, pitch;
    if (sscanf(line, "%15s %7s %d %d %d %d %d %d %d", k, t, &n, &hit, &nx, &ny, &bx, &by, &pitch) < 9) continue;
    long need = (long)pitch * ny * (strcmp(t, "f64") ? 4 : 8);
    need = (need + (2L << 20) - 1) / (2L << 20) * (2L << 20);
    if (need > largest) largest = need;
    if ((!strcmp(k, "streams") || !strcmp(k, "batch")) && need > stream) stream = need;
  }
  rewind(f);
  long bytes = 9 * stream > largest ? 9 * stream : largest;  // up to 8 streams plus a spare, or the largest array
  char *in, *out;
  CK(cudaMalloc(&in, bytes)); CK(cudaMalloc(&out, bytes)); CK(cudaMemset(in, 0, bytes)); CK(cudaMemset(out, 0, bytes));
  int id = 0;
  while (fgets(line, sizeof line, f)) {
    char k[16], t[8]; int n, hit, nx, ny, bx, by, pitch;
    if (sscanf(line, "%15s %7s %d %d %d %d %d %d %d", k, t, &n, &hit, &nx, &ny, &bx, &by, &pitch) < 9) continue;
    int size = strcmp(t, "f64") ? 4 : 8;
    if (pitch < nx || n < 1 || n > 8) { printf("%s: pitch < nx or n outside 1-8\n", line); return 1; }
    if ((!strcmp(k, "rows") || !strcmp(k, "copyrows")) && n > 1 && pitch < nx + n - 1) { printf("%s: the rows' offset leaves the pitch\n", line); return 1; }
    dim3 b(bx, by), g((nx + bx - 1) / bx, (ny + by - 1) / by);
    bool streams = !strcmp(k, "streams"), batch = !strcmp(k, "batch"), copyrows = !strcmp(k, "copyrows");
    bool rows = !streams && !batch && !copyrows;
    if (size == 4 && batch) ::batch<float>(g, b, (float*)in, (float*)out, n, hit, nx, ny, pitch, stream / 4);
    if (size == 8 && batch) ::batch<double>(g, b, (double*)in, (double*)out, n, hit, nx, ny, pitch, stream / 8);
    if (size == 4 && streams) k_streams<float><<<g, b>>>((float*)in, (float*)out, n, hit, nx, ny, pitch, stream / 4);
    if (size == 8 && streams) k_streams<double><<<g, b>>>((double*)in, (double*)out, n, hit, nx, ny, pitch, stream / 8);
    if (size == 4 && copyrows) k_copyrows<float><<<g, b>>>((float*)in, (float*)out, n, nx, ny, pitch);
    if (size == 8 && copyrows) k_copyrows<double><<<g, b>>>((double*)in, (double*)out, n, nx, ny, pitch);
    if (size == 4 && rows) k_rows<float><<<g, b>>>((float*)in, (float*)out, n, hit, nx, ny, pitch);
    if (size == 8 && rows) k_rows<double><<<g, b>>>((double*)in, (double*)out, n, hit, nx, ny, pitch);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    printf("%d %s", id++, line);
  }
}
