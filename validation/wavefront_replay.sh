#!/usr/bin/env bash
# Runs validation/wavefront_replay.cu under ncu on GPU 0 (docs/model.md "Coalescer and L1"; H200 run of
# 2026-11-29 in tests/data/h200/wavefront_replay, summarised by validation/wavefront_replay_summary.py):
#   validation/wavefront_replay.sh OUTDIR [LAUNCHES]   (default validation/wavefront_replay_launches.txt;
#   the batch kernel's: validation/wavefront_replay_batch_launches.txt)
# Writes OUTDIR/ncu.csv (one ncu ID per launch line, in order) and OUTDIR/run.log; copy both to
# tests/data/h200/wavefront_replay/ (with the launch list). 304 launches: under a minute of ncu on the H200.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: wavefront_replay.sh OUTDIR [LAUNCHES]}; launches=${2:-$here/wavefront_replay_launches.txt}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/wavefront_replay" "$here/wavefront_replay.cu"
m=l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_global_ld.sum,smsp__warps_launched.sum,sm__ctas_launched.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum
ncu --metrics "$m" --cache-control all --clock-control base --csv --print-units base \
    "$out/wavefront_replay" "$launches" > "$out/ncu.csv" 2> "$out/run.log"
cp "$launches" "$out/launches.txt"
