#!/usr/bin/env bash
# Runs validation/load_cache_ops.cu under ncu (base clocks, caches flushed) on GPU 0, and lists
# each kernel's SASS loads:
#   validation/load_cache_ops.sh OUTDIR validation/load_cache_ops_launches.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: load_cache_ops.sh OUTDIR LAUNCHES}; launches=${2:?usage: load_cache_ops.sh OUTDIR LAUNCHES}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/load_cache_ops" "$here/load_cache_ops.cu"
cuobjdump -sass "$out/load_cache_ops" | awk '/Function :/{k=$3} /LDG/{for(i=1;i<=NF;i++) if($i ~ /^LDG/) print k, $i}' | sort | uniq -c > "$out/sass_loads.txt"
m=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum,dram__sectors_read.sum,dram__sectors_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum,smsp__warps_launched.sum
if ! ncu --metrics "$m" --cache-control all --clock-control base --csv --print-units base \
    "$out/load_cache_ops" "$launches" > "$out/ncu.csv" 2> "$out/ncu.err"; then
  m=${m/l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,/}
  ncu --metrics "$m" --cache-control all --clock-control base --csv --print-units base \
      "$out/load_cache_ops" "$launches" > "$out/ncu.csv" 2>> "$out/ncu.err"
fi
