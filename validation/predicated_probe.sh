#!/usr/bin/env bash
# Runs validation/predicated_probe.cu under ncu (base clocks) on GPU 0, and lists each kernel's
# memory instructions in its SASS (predicated ones start with @P):
#   validation/predicated_probe.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: predicated_probe.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/predicated_probe" "$here/predicated_probe.cu"
cuobjdump -sass "$out/predicated_probe" | awk '/Function :/{k=$3} /LDG|STG|LDS|STS|RED|ATOM|VOTE|POPC|BRA|BAR/{$1=""; print k, $0}' > "$out/sass_ops.txt"
m=gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum
m=$m,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_global_red.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,lts__t_requests_srcunit_tex_op_red.sum,smsp__warps_launched.sum
ncu --kernel-name regex:'^k_' --metrics "$m" --clock-control base --csv --print-units base \
    "$out/predicated_probe" > "$out/ncu.csv" 2> "$out/ncu.err"
