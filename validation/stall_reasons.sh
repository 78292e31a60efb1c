#!/usr/bin/env bash
# Where the time goes in a few star4 shapes: warp stall reasons, how busy the L1, L2 and DRAM are,
# and the traffic, under ncu (caches flushed, base clocks). For the time model's known gap: deep
# blocks run slower than their busiest unit allows (docs/model.md "Time").
#   validation/stall_reasons.sh OUTDIR [LAUNCHES]     (LAUNCHES: validation/launches-stall.txt)
# Writes OUTDIR/stall_ncu.csv (ncu --csv --print-units base) and OUTDIR/ncu.log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: stall_reasons.sh OUTDIR [LAUNCHES]}
launches=${2:-$here/launches-stall.txt}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$out/stencils" "$here/stencils.cu"
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
m=$m,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio
m=$m,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio
m=$m,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio
m=$m,smsp__average_warp_latency_issue_stalled_not_selected.ratio,smsp__average_warp_latency_issue_stalled_selected.ratio
m=$m,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_drain.ratio
m=$m,smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio,smsp__average_warp_latency_issue_stalled_no_instruction.ratio
m=$m,smsp__average_warp_latency_issue_stalled_membar.ratio,smsp__average_warp_latency_issue_stalled_tex_throttle.ratio
m=$m,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active
m=$m,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum
m=$m,l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum,l1tex__lsuin_requests.sum,l1tex__f_wavefronts.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_global_op_ld.sum,l1tex__t_set_conflicts_pipe_lsu_mem_global_op_ld.sum
m=$m,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,l1tex__m_l1tex2xbar_req.sum
m=$m,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,lts__t_sectors_srcunit_tex_op_read.sum,dram__sectors_read.sum,sm__throughput.avg.pct_of_peak_sustained_active
m=$m,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
ncu --metrics "$m" --cache-control all --clock-control base --kernel-name 'regex:^(star|box27|copy)' \
  -f -o "$out/r" "$out/stencils" "$launches" > "$out/ncu.log" 2>&1
ncu --import "$out/r.ncu-rep" --csv --print-units base --print-kernel-base demangled > "$out/stall_ncu.csv"
rm -f "$out/r.ncu-rep" "$out/stencils"
