#!/usr/bin/env bash
# Measures validation/partial_mix.cu (reads from DRAM or the L2 beside stores that write parts of
# sectors) on GPU 0 with ncu at base clocks: validation/partial_mix.sh OUTDIR [LAUNCHES].
# Writes OUTDIR/ncu.csv (raw --csv --print-units base; ID i is launch line i) and OUTDIR/run.log.
# Data: tests/data/h200/partial_mix/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: partial_mix.sh OUTDIR [LAUNCHES]}
launches=${2:-$here/partial_mix_launches.txt}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/partial_mix" "$here/partial_mix.cu"
"$out/partial_mix" "$launches" > "$out/run.log"
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,dram__sectors_read.sum,dram__sectors_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
ncu --metrics "$metrics" --cache-control all --clock-control base --csv --print-units base \
    -k 'regex:^mix_(dram|l2)$' "$out/partial_mix" "$launches" > "$out/ncu.csv" 2> "$out/ncu.err"
rm -f "$out/partial_mix"
echo "profiled $(grep -c '"gpu__time_duration.sum"' "$out/ncu.csv") launches"
