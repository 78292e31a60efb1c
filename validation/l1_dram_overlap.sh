#!/usr/bin/env bash
# Runs validation/l1_dram_overlap.cu under ncu (base clocks) on GPU 0:
#   validation/l1_dram_overlap.sh OUTDIR [LOG2_ROWS [BLOCKS_PER_SM [LOG2_STREAM_ROWS]]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: l1_dram_overlap.sh OUTDIR [LOG2_ROWS]}
rows=${2:-25}
per_sm=${3:-8}
wrap=${4:-}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/l1_dram_overlap" "$here/l1_dram_overlap.cu"
cuobjdump -sass "$out/l1_dram_overlap" | grep -c 'LDG' > "$out/ldg_count.txt" || true
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,l1tex__data_pipe_lsu_wavefronts.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum
m=$m,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed_op_global_ld.sum
ncu --kernel-name regex:'k_mix' --metrics "$m" --clock-control base --csv --print-units base \
    "$out/l1_dram_overlap" "$rows" "$per_sm" $wrap > "$out/ncu.csv" 2> "$out/ncu.err"
"$out/l1_dram_overlap" "$rows" "$per_sm" $wrap > "$out/launches.txt"
