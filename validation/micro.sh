#!/usr/bin/env bash
# Builds and profiles the microbenchmarks of this folder on GPU 0 and writes tidy CSVs into OUTDIR
# (validation/measure.sh runs it with MICRO=1):
#
#   validation/micro.sh OUTDIR [STEP ...]     # steps: latency bw launch wavefronts geometry (default: all)
#
# Every benchmark runs under ncu with --clock-control base (clocks locked to base, as the stencil
# measurements) and, except the L2-resident bandwidth runs, --cache-control all (caches flushed
# before every profiled launch). Per step:
#   latency     latency.cu    -> latency.csv (size, stride, cycles and ns per dependent load)
#               l2_near_far.cu -> l2_near_far.csv (every timed load) + l2_near_far_runs.csv (per launch, clock)
#                             and, run without ncu, l2_partition_map.csv (which SMs share an L2 partition) and
#                             l2_stores.csv.gz + l2_stores_summary.csv (where stores leave a line)
#   bw          bw_inflight.cu -> bw_inflight.csv (bandwidth versus warps per SM and loads in flight)
#   launch      launch_overhead.cu -> launch_overhead.csv (empty kernels over grid and block sizes)
#   wavefronts  l1_wavefronts.cu -> l1_wavefronts.csv (L1TEX counters per access pattern)
#   geometry    l1_geometry.cu -> l1_geometry.csv (L1 capacity, associativity)
#   capacity    l2_capacity.cu -> l2_capacity.csv (L2 reuse kept between passes of a GPU-wide sweep, per footprint)
#                             + l2_capacity_blocks.csv (the SM of every block); not in the default steps
#   sets        l2_sets.cu, run without ncu (seconds): l2_sets_curve.csv (when a pool of N lines read by one
#               SM evicts a line from its L2 partition), l2_sets_cross.csv (the pool read by other SMs),
#               l2_sets_lines/summary/trace/policy.csv (the eviction-set search), l2_sets_reuse.csv (does a
#               hit protect a line?), l2_sets_reduce_*.csv (16-line sets after a clean flush, and their
#               replacement), l2_sets_order.csv, l2_sets_clean.csv, l2_sets_dirtvol.csv (what the flush's
#               dirt does), l2_sets_scan*.csv (every line of 1 GiB tested for the sets of up to 12 targets:
#               the set function as a program sees it); not in the default steps.
#               HOME_MASK (hex) = the within-page home bits of the config, for the near/far-only pools
# Besides each CSV: NAME_runs.csv (the benchmark's own output), NAME_ncu.csv (the raw ncu export),
# NAME.log. Metrics that this ncu does not know are dropped (listed in OUTDIR/micro.log).
# QUICK=1 makes every benchmark run a few configurations only (a smoke test).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: micro.sh OUTDIR [STEP ...]}
shift
steps=${*:-latency bw launch wavefronts geometry}
mkdir -p "$out/bin" "$out/reps"
out=$(cd "$out" && pwd)
log="$out/micro.log"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
{
  echo "# micro.sh $(date -u +%Y-%m-%dT%H:%MZ) steps: $steps QUICK=${QUICK:-0}"
  echo "# $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader -i 0)"
  echo "# $(ncu --version | tail -1)"
  echo "# $(nvcc --version | tail -2 | head -1)"
} >> "$log"

[ -s "$out/ncu_query_metrics.txt" ] || ncu --query-metrics > "$out/ncu_query_metrics.txt" 2>&1 || true
# Keeps the metrics of a comma-separated list whose base name this ncu lists.
valid_metrics() {
  local keep=() m
  for m in ${1//,/ }; do
    if ! [ -s "$out/ncu_query_metrics.txt" ] || grep -qw -- "${m%%.*}" "$out/ncu_query_metrics.txt"; then keep+=("$m")
    else echo "dropped metric $m (not in ncu --query-metrics)" >> "$log"; fi
  done
  local IFS=,; echo "${keep[*]}"
}
build() { nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$out/bin/$1" "$here/$1.cu" >> "$log" 2>&1 || { echo "build of $1 failed" | tee -a "$log"; return 1; }; }
# prof NAME KERNEL_REGEX CACHE_CONTROL METRICS COMMAND...: profiles, writes NAME_ncu.csv
prof() {
  local name=$1 regex=$2 cache=$3 metrics; metrics=$(valid_metrics "$4"); shift 4
  ncu --metrics "$metrics" --cache-control "$cache" --clock-control base --kernel-name "regex:$regex" \
      --export "$out/reps/$name" --force-overwrite "$@" > "$out/$name.log" 2>&1 || { echo "ncu run $name failed (see $name.log)" | tee -a "$log"; return 1; }
  ncu --import "$out/reps/$name.ncu-rep" --csv --print-units base > "$out/${name}_ncu.csv" 2>> "$log"
}
join() { python3 "$here/micro_join.py" "$@" 2>&1 | tee -a "$log"; }
T=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second

step_latency() {
  build latency && prof latency '^lat_chase' all "$T" "$out/bin/latency" "$out/latency_runs.csv" &&
    join latency "$out/latency.csv" "$out/latency_runs.csv" "$out/latency_ncu.csv"
  build l2_near_far && prof l2_near_far '^nf_chase' all "$T" "$out/bin/l2_near_far" "$out/l2_near_far_runs_raw.csv" "$out/l2_near_far.csv" &&
    join nearfar "$out/l2_near_far_runs.csv" "$out/l2_near_far_runs_raw.csv" "$out/l2_near_far_ncu.csv"
  [ -x "$out/bin/l2_near_far" ] && { "$out/bin/l2_near_far" --map "$out/l2_partition_map.csv" > "$out/l2_partition_map.log" 2>&1 || echo "partition map failed" | tee -a "$log"; }
  [ -x "$out/bin/l2_near_far" ] && { "$out/bin/l2_near_far" --stores "$out/l2_stores.csv" > "$out/l2_stores.log" 2>&1 &&
    gzip -f "$out/l2_stores.csv" && python3 "$here/l2_stores_summary.py" "$out/l2_stores.csv.gz" > "$out/l2_stores_summary.csv" ||
    echo "store placement failed" | tee -a "$log"; }
}
step_bw() {
  local m="$T,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"
  build bw_inflight || return 1
  prof bw_dram '^bw_kernel' all "$m" "$out/bin/bw_inflight" dram "$out/bw_dram_runs.csv"
  prof bw_l2 '^bw_kernel' none "$m" "$out/bin/bw_inflight" l2 "$out/bw_l2_runs.csv"
  join bw "$out/bw_inflight.csv" "$out/bw_dram_runs.csv" "$out/bw_dram_ncu.csv" "$out/bw_l2_runs.csv" "$out/bw_l2_ncu.csv"
}
step_launch() {
  build launch_overhead && prof launch_overhead '^empty_k' all "$T" "$out/bin/launch_overhead" "$out/launch_overhead_runs.csv" &&
    join launch "$out/launch_overhead.csv" "$out/launch_overhead_runs.csv" "$out/launch_overhead_ncu.csv"
}
step_wavefronts() {
  local m="$T,smsp__inst_executed_op_global_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
  m+=",l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"
  m+=",l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum"
  m+=",l1tex__data_bank_conflicts_pipe_lsu_mem_global_op_ld.sum,l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum"
  # sm_90 names: the data-stage wavefronts of local/global/distributed-shared accesses, their bank conflicts
  m+=",l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum"
  m+=",l1tex__data_bank_conflicts_pipe_lsu_mem_gds_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_cmd_read.sum,l1tex__lsu_writeback_active_mem_lgds.sum"
  build l1_wavefronts && prof l1_wavefronts '^wf_load' all "$m" "$out/bin/l1_wavefronts" "$out/l1_wavefronts_runs.csv" &&
    join wavefronts "$out/l1_wavefronts.csv" "$out/l1_wavefronts_runs.csv" "$out/l1_wavefronts_ncu.csv"
}
step_stores() {
  local m="$T,smsp__inst_executed_op_global_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
  m+=",l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum"
  m+=",l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_write.sum"
  # No join kind for this one yet: the runs CSV and the raw ncu export pair row i with ncu ID i.
  build l1_store_wavefronts && prof l1_store_wavefronts '^wf_store' all "$m" "$out/bin/l1_store_wavefronts" "$out/l1_store_wavefronts_runs.csv"
}
step_geometry() {
  build l1_geometry && prof l1_geometry '^lat_chase' all "$T" "$out/bin/l1_geometry" "$out/l1_geometry_runs.csv" &&
    join geometry "$out/l1_geometry.csv" "$out/l1_geometry_runs.csv" "$out/l1_geometry_ncu.csv"
}
step_capacity() {
  local m="$T,dram__sectors_read.sum,dram__sectors_write.sum,lts__t_sectors_srcunit_tex_op_read.sum"
  m+=",lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_ltcfabric.sum"
  m+=",l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"
  build l2_capacity && prof l2_capacity '^l2cap_sweep' all "$m" "$out/bin/l2_capacity" "$out/l2_capacity_runs.csv" "$out/l2_capacity_blocks.csv" &&
    join capacity "$out/l2_capacity.csv" "$out/l2_capacity_runs.csv" "$out/l2_capacity_ncu.csv"
}

step_sets() {
  build l2_sets || return 1
  "$out/bin/l2_sets" "$out" curve 4 "${HOME_MASK:-0}" > "$out/l2_sets.log" 2>&1 &&
    "$out/bin/l2_sets" "$out" cross 3 >> "$out/l2_sets.log" 2>&1 &&
    "$out/bin/l2_sets" "$out" evset 2 >> "$out/l2_sets.log" 2>&1 &&
    "$out/bin/l2_sets" "$out" reuse 8 >> "$out/l2_sets.log" 2>&1 &&
    "$out/bin/l2_sets" "$out" reduce 8 524288 read >> "$out/l2_sets.log" 2>&1 &&
    "$out/bin/l2_sets" "$out" order 4 >> "$out/l2_sets.log" 2>&1 &&
    "$out/bin/l2_sets" "$out" clean 6 >> "$out/l2_sets.log" 2>&1 &&
    "$out/bin/l2_sets" "$out" dirtvol 4 >> "$out/l2_sets.log" 2>&1 &&
    mkdir -p "$out/scan" && "$out/bin/l2_sets" "$out/scan" reduce 12 524288 read scan 512 >> "$out/l2_sets.log" 2>&1 &&
    cp "$out/scan/l2_sets_scan.csv" "$out/scan/l2_sets_scan_summary.csv" "$out/" || echo "l2_sets failed (see l2_sets.log)" | tee -a "$log"
}

for s in $steps; do
  t0=$(date +%s)
  "step_$s" || echo "step $s failed" | tee -a "$log"
  echo "step $s: $(( $(date +%s) - t0 )) s" | tee -a "$log"
done
