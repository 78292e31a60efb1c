#!/usr/bin/env bash
# Measures validation/store_patterns.cu (stores and loads spread over 1-32 lines per warp
# instruction) on GPU 0 with ncu at base clocks: validation/store_patterns.sh OUTDIR [LAUNCHES].
# Writes OUTDIR/ncu.csv (raw --csv --print-units base; ID i is launch line i) and OUTDIR/run.log.
# Then the block launch rate at both clocks: validation/families.cu's empty_blocks launches
# (OUTDIR/launch_base.csv, OUTDIR/launch_boost.csv). Data: tests/data/h200/store_patterns/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: store_patterns.sh OUTDIR [LAUNCHES]}
launches=${2:-$here/store_patterns_launches.txt}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/store_patterns" "$here/store_patterns.cu"
"$out/store_patterns" "$launches" > "$out/run.log"
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__sectors_read.sum,dram__sectors_write.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_ltcfabric.sum
ncu --metrics "$metrics" --cache-control all --clock-control base --csv --print-units base \
    -k 'regex:^(store_f32|store_f4|load_f32)$' "$out/store_patterns" "$launches" > "$out/ncu.csv" 2> "$out/ncu.err"
# Block launch rate: empty blocks of 32-1024 threads at the base and the boost clock.
nvcc -O3 -arch="sm_$cc" -o "$out/families" "$here/families.cu"
printf 'empty_blocks %s 1 1 %s 1 1\n' 16896 32 135168 32 135168 128 135168 512 135168 1024 540672 128 > "$out/launch.txt"
for clk in base none; do
  ncu --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__ctas_launched.sum --clock-control $clk \
      --csv --print-units base -k empty_blocks "$out/families" "$out/launch.txt" > "$out/launch_$clk.csv" 2>&1
done
mv "$out/launch_none.csv" "$out/launch_boost.csv"
rm -f "$out/store_patterns" "$out/families"
echo "profiled $(grep -c '"gpu__time_duration.sum"' "$out/ncu.csv") launches"
