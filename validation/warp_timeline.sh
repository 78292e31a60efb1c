#!/usr/bin/env bash
# Builds validation/warp_timeline.cu, checks that its logging leaves the stencils' registers and load
# runs alone, logs warp timelines of deep and flat blocks, and counts the L2 reads of the logged and
# the plain star4 1x16x64 under ncu (base clocks, caches flushed), so the log is known not to change
# the traffic:   validation/warp_timeline.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: warp_timeline.sh OUTDIR}
mkdir -p "$out"
cd "$out"
nvcc -O3 -arch=sm_90 -o warp_timeline "$here/warp_timeline.cu"
nvcc -O3 -arch=sm_90 -o stencils "$here/stencils.cu"
for b in warp_timeline stencils; do
  cuobjdump -res-usage "$b" 2>&1 | grep -A1 "star" > "$b.res"
  cuobjdump -sass "$b" > "$b.sass"
  python3 "$here/sass_runs.py" "$b.sass" > "$b.runs" || true
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > device.txt
./warp_timeline star4 640 512 512 1 16 64  star4 640 512 512 2 512 1  star4 640 512 512 8 8 4 \
  star4 640 512 512 32 8 4  star4 640 512 512 16 16 4  star4 640 512 512 256 1 1 \
  star1 256 256 256 1 16 64  star4 640 512 512 4 16 16 2> timeline.log | gzip > warp_timeline.csv.gz
m=lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,dram__sectors_read.sum,gpu__time_duration.sum
ncu --metrics $m --cache-control all --clock-control base --launch-skip 1 --launch-count 1 -k regex:star \
  --csv --print-units base ./warp_timeline star4 640 512 512 1 16 64 > ncu_logged.csv 2> ncu_logged.log || true
echo "star4 640 512 512 1 16 64" > one.txt
ncu --metrics $m --cache-control all --clock-control base -k regex:star \
  --csv --print-units base ./stencils one.txt > ncu_plain.csv 2> ncu_plain.log || true
rm -f warp_timeline stencils
