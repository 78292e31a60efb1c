#!/usr/bin/env bash
# Runs validation/launch_terms_probe.cu under ncu (base clocks) on GPU 0, and lists each kernel's
# special-register reads, barriers and memory instructions in its SASS:
#   validation/launch_terms_probe.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: launch_terms_probe.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/launch_terms_probe" "$here/launch_terms_probe.cu"
cuobjdump -sass "$out/launch_terms_probe" | awk '/Function :/{k=$3} /S2R|S2UR|CS2R|LDG|STG|LDS|STS|RED|ATOM|VOTE|BRA|BAR|EXIT/{$1=""; print k, $0}' > "$out/sass_ops.txt"
m=gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,smsp__inst_executed_op_global_st.sum,smsp__inst_executed_op_global_red.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum
m=$m,smsp__warps_launched.sum,sm__ctas_launched.sum,smsp__inst_executed.sum
ncu --kernel-name regex:'^k_' --metrics "$m" --clock-control base --csv --print-units base \
    "$out/launch_terms_probe" > "$out/ncu.csv" 2> "$out/ncu.err"
