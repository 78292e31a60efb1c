#!/usr/bin/env bash
# Runs validation/warp_ops_probe.cu under ncu (base clocks) on GPU 0, and counts each kernel's
# warp operations in its SASS:
#   validation/warp_ops_probe.sh OUTDIR validation/warp_ops_probe_launches.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: warp_ops_probe.sh OUTDIR LAUNCHES}; launches=${2:?usage: warp_ops_probe.sh OUTDIR LAUNCHES}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/warp_ops_probe" "$here/warp_ops_probe.cu"
cuobjdump -sass "$out/warp_ops_probe" | awk '/Function :/{k=$3} /SHFL|VOTE|REDUX|MATCH/{split($2,a,"/"); op=$2; if (op ~ /^@/) op=$3; c[k" "op]++} END{for(x in c) print c[x], x}' | sort -k2 > "$out/sass_ops.txt"
core=l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed.sum,smsp__warps_launched.sum,sm__ctas_launched.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg,smsp__cycles_active.avg
extra=smsp__inst_executed_pipe_lsu.sum,smsp__inst_executed_op_shfl.sum,smsp__sass_inst_executed_op_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum
ncu --query-metrics > "$out/query_metrics.txt" 2>&1 || true
if ! ncu --metrics "$core,$extra" --clock-control base --csv --print-units base \
    "$out/warp_ops_probe" "$launches" > "$out/ncu.csv" 2> "$out/ncu.err"; then
  ncu --metrics "$core" --clock-control base --csv --print-units base \
      "$out/warp_ops_probe" "$launches" > "$out/ncu.csv" 2>> "$out/ncu.err"
fi
