#!/usr/bin/env bash
# Runs validation/atomics_contention.cu under ncu (base clocks) on GPU 0, with each metric's sum
# over the L2 slices and its largest slice (.max), and the SASS of each kernel's atomic:
#   validation/atomics_contention.sh OUTDIR validation/atomics_contention_launches.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: atomics_contention.sh OUTDIR LAUNCHES}; launches=${2:?usage: atomics_contention.sh OUTDIR LAUNCHES}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/atomics_contention" "$here/atomics_contention.cu"
cuobjdump -sass "$out/atomics_contention" | awk '/Function :/{k=$3} /RED|ATOM/{print k, $2, $3}' | sort | uniq -c > "$out/sass_atomics.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$out/gpu.txt"
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second
m=$m,lts__t_requests_srcunit_tex_op_red.sum,lts__t_requests_srcunit_tex_op_red.max,lts__t_requests_srcunit_tex_op_red.avg
m=$m,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sectors_srcunit_tex_op_red.max
m=$m,lts__t_requests_srcunit_tex_op_atom.sum,lts__t_requests_srcunit_tex_op_atom.max,lts__t_sectors_srcunit_tex_op_atom.sum
m=$m,lts__t_sectors_op_red.sum,lts__t_sectors_op_red.max,lts__t_sectors_op_atom.sum,lts__t_sectors_op_atom.max
m=$m,lts__t_sectors_srcunit_ltcfabric.sum,dram__sectors_read.sum,dram__sectors_write.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__data_pipe_lsu_wavefronts.sum
ncu --kernel-name regex:'^k_' --metrics "$m" --clock-control base --csv --print-units base \
    "$out/atomics_contention" "$launches" > "$out/ncu.csv" 2> "$out/ncu.err"
