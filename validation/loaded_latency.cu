// How a load's latency grows with the DRAM's utilisation (issue 53, item 3: the delay of the time
// model's queueing network, docs/model.md "Time"). The model's delay per round is a constant number
// of idle DRAM latencies (`loaded_latency_factor`), and only its queueing stations make a busier DRAM
// slower; tests/data/h200/round_latency/ shows a round taking longer, relative to that delay, the
// more bandwidth its own warps draw. This measures it directly: on every SM one probe warp chases
// pointers (one dependent load a step, each a random line of a 4 GiB array, missing L1 and L2)
// while S other warps of the same block stream through a second array as fast as they can, K
// lines at a time each (read: K independent line loads, summed; copy: the K lines loaded and
// stored to a third array; write: K lines stored).
// The probe times its steps with %globaltimer; the streaming warps count their lines until the
// probe raises a flag, so the bandwidth is theirs over the probe's time.
//
//   loaded_latency OUT.csv     columns: variant, streaming_warps_per_sm, loads_in_flight (K, lines
//                              a streaming warp moves at a time), probe_ns_per_load, stream_gb_s
//                              (reads + writes), lines (moved by the streaming warps)
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); exit(1); } } while (0)

static const uint64_t CHASE_WORDS = 1ull << 30;   // 4 GiB of 32-bit words: the probe's lines
static const uint64_t STREAM_WORDS = 1ull << 28;  // 1 GiB streamed (and 1 GiB written by copy)
static const int STEPS = 4000;                    // the probe's dependent loads

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

enum Mode { READ, COPY, WRITE };
static const char* mode_name[] = {"read", "copy", "write"};

template <int K, int MODE>
__global__ void loaded(const uint32_t* __restrict__ chase, const float* __restrict__ in,
                       float* __restrict__ out, unsigned long long* lines, double* probe_ns) {
  __shared__ volatile int done;
  int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) done = 0;
  __syncthreads();
  if (warp == 0) {
    // The probe: each step's line is picked by the word the last step loaded (the array holds a
    // random permutation of line numbers), so the loads are strictly dependent.
    uint32_t line = (blockIdx.x * 2654435761u) & (CHASE_WORDS / 32 - 1);
    uint64_t t0 = now_ns();
    for (int i = 0; i < STEPS; i++) line = __ldcg(chase + (uint64_t)line * 32 + lane) & (CHASE_WORDS / 32 - 1);
    asm volatile("" : "+r"(line)::"memory");  // the clock is read after the last step's load
    uint64_t t1 = now_ns();
    if (lane == 0) {
      probe_ns[blockIdx.x] = double(t1 - t0) / STEPS;
      probe_ns[gridDim.x + blockIdx.x] = line;  // keeps the chase
      done = 1;
    }
    return;
  }
  // The streaming warps: warp w of block b walks lines b * S + w, + gridDim.x * S, ... (K at a
  // time, independent), wrapping around the array, until the probe is done.
  int s = blockDim.x / 32 - 1;
  uint64_t nlines = STREAM_WORDS / 32;
  uint64_t line = (uint64_t)blockIdx.x * s + (warp - 1);
  uint64_t stride = (uint64_t)gridDim.x * s;
  unsigned long long count = 0;
  float acc = 0.0f;
  while (!done) {
    float v[K];
    if (MODE == WRITE) {
#pragma unroll
      for (int k = 0; k < K; k++) out[((line + k * stride) & (nlines - 1)) * 32 + lane] = float(count + k);
    } else {
#pragma unroll
      for (int k = 0; k < K; k++) v[k] = __ldcg(in + ((line + k * stride) & (nlines - 1)) * 32 + lane);
      if (MODE == COPY) {
#pragma unroll
        for (int k = 0; k < K; k++) out[((line + k * stride) & (nlines - 1)) * 32 + lane] = v[k];
      } else {
#pragma unroll
        for (int k = 0; k < K; k++) acc += v[k];
      }
    }
    line += K * stride;
    count += K;
  }
  if (acc == 12345.0f) out[0] = acc;
  if (lane == 0) atomicAdd(lines, count);
}

template <int K, int MODE>
void run(FILE* f, const uint32_t* chase, const float* in, float* out, unsigned long long* d_lines,
         double* d_probe, int s) {
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int rep = 0; rep < 2; rep++) {  // the first run warms the TLBs and clocks
    CK(cudaMemset(d_lines, 0, sizeof(unsigned long long)));
    loaded<K, MODE><<<sms, 32 * (1 + s)>>>(chase, in, out, d_lines, d_probe);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (rep == 0) continue;
    unsigned long long lines;
    double probe[1024];
    CK(cudaMemcpy(&lines, d_lines, sizeof lines, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(probe, d_probe, sms * sizeof(double), cudaMemcpyDeviceToHost));
    double ns = 0;
    for (int i = 0; i < sms; i++) ns += probe[i] / sms;
    double bytes = double(lines) * 128.0 * (MODE == COPY ? 2.0 : 1.0);
    fprintf(f, "%s,%d,%d,%.1f,%.0f,%llu\n", mode_name[MODE], s, K, ns, bytes / (ns * STEPS), lines);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: loaded_latency OUT.csv\n"); return 1; }
  FILE* f = fopen(argv[1], "w");
  if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
  uint32_t* chase; float *in, *out; unsigned long long* lines; double* probe;
  CK(cudaMalloc(&chase, CHASE_WORDS * 4));
  CK(cudaMalloc(&in, STREAM_WORDS * 4));
  CK(cudaMalloc(&out, STREAM_WORDS * 4));
  CK(cudaMalloc(&lines, sizeof(unsigned long long)));
  CK(cudaMalloc(&probe, 2048 * sizeof(double)));
  // A random permutation of the line numbers, word for word within each line (every lane reads the
  // same next line).
  {
    uint64_t n = CHASE_WORDS / 32;
    uint32_t* next = (uint32_t*)malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) next[i] = (uint32_t)i;
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = n - 1; i > 0; i--) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      uint64_t j = x % (i + 1);
      uint32_t t = next[i]; next[i] = next[j]; next[j] = t;
    }
    uint32_t* host = (uint32_t*)malloc(CHASE_WORDS * 4);
    for (uint64_t i = 0; i < n; i++)
      for (int w = 0; w < 32; w++) host[i * 32 + w] = next[i];
    CK(cudaMemcpy(chase, host, CHASE_WORDS * 4, cudaMemcpyHostToDevice));
    free(host); free(next);
  }
  CK(cudaMemset(in, 0, STREAM_WORDS * 4));
  fprintf(f, "variant,streaming_warps_per_sm,loads_in_flight,probe_ns_per_load,stream_gb_s,lines\n");
  int ss[] = {0, 1, 2, 4, 8, 12, 16, 24, 31};  // blocks of up to 1024 threads
  for (int s : ss) run<4, READ>(f, chase, in, out, lines, probe, s);
  for (int s : ss) run<16, READ>(f, chase, in, out, lines, probe, s);
  for (int s : ss) run<4, COPY>(f, chase, in, out, lines, probe, s);
  for (int s : ss) run<16, COPY>(f, chase, in, out, lines, probe, s);
  for (int s : ss) run<4, WRITE>(f, chase, in, out, lines, probe, s);
  for (int s : ss) run<16, WRITE>(f, chase, in, out, lines, probe, s);
  fclose(f);
  return 0;
}
