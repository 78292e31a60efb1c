#!/usr/bin/env bash
# Runs validation/wavefront_probe.cu under ncu on GPU 0:
#   validation/wavefront_probe.sh OUTDIR LAUNCHES   (LAUNCHES: tests/data/h100/micro/wavefront_probe/run*_launches.txt)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: wavefront_probe.sh OUTDIR LAUNCHES}; launches=${2:?usage: wavefront_probe.sh OUTDIR LAUNCHES}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/wavefront_probe" "$here/wavefront_probe.cu"
m=l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_write.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum,smsp__warps_launched.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed.sum,sm__ctas_launched.sum,l1tex__lsu_writeback_active.sum,gpu__time_duration.sum
ncu --metrics "$m" --cache-control all --clock-control base --csv --print-units base \
    "$out/wavefront_probe" "$launches" > "$out/ncu.csv"
