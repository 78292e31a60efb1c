#!/usr/bin/env bash
# Shared-memory measurements: the bank rule (validation/shared_banks.cu over
# validation/shared_banks_configs.txt: one warp, 64 accesses per launch) and two tiled kernels
# (transpose_tiled of new_kernels.cu, jacobi2d_shared of shared_stencil.cu) with the shared and
# global counters. Usage: validation/shared_probe.sh OUTDIR. Writes OUTDIR/{banks,transpose,stencil}_ncu.csv
# (raw --csv --print-units base, preceded by the programs' "ID ..." lines) and the SASS.
# Data: tests/data/h200/shared/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: shared_probe.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
for p in shared_banks shared_stencil new_kernels; do
  nvcc -O3 -arch="sm_$cc" -o "$out/$p" "$here/$p.cu"
  cuobjdump -sass "$out/$p" | grep -E "Function|LDS|STS|LDG|STG|BAR" > "$out/${p}_sass.txt" || true
done
"$out/shared_banks" "$here/shared_banks_configs.txt" > /dev/null
shared=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts.sum
global=dram__sectors_read.sum,dram__sectors_write.sum,gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum,launch__occupancy_limit_blocks,launch__occupancy_limit_shared_mem,launch__registers_per_thread,sm__cycles_elapsed.avg.per_second
ncu --metrics "$shared" --csv --print-units base -k 'regex:probe' "$out/shared_banks" "$here/shared_banks_configs.txt" > "$out/banks_ncu.csv" 2> "$out/banks.err"
ncu --metrics "$shared,$global" --cache-control all --clock-control base --csv --print-units base \
  -k 'regex:^(transpose_tiled|transpose_naive|jacobi2d)' "$out/new_kernels" "$here/shared_transpose_launches.txt" > "$out/transpose_ncu.csv" 2> "$out/transpose.err"
ncu --metrics "$shared,$global" --cache-control all --clock-control base --csv --print-units base \
  "$out/shared_stencil" "$here/shared_stencil_launches.txt" > "$out/stencil_ncu.csv" 2> "$out/stencil.err"
grep -h "==ERROR==\|==WARNING==" "$out"/*.csv "$out"/*.err | sort | uniq -c | head || true
