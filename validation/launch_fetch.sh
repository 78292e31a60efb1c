#!/usr/bin/env bash
# Runs validation/launch_fetch.cu under ncu (base clocks) on GPU 0, with the default cache
# control (all caches flushed before each pass) and with none, and lists each kernel's SASS size:
#   validation/launch_fetch.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: launch_fetch.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/launch_fetch" "$here/launch_fetch.cu"
# Bytes of SASS per function (16 per instruction, the offsets cuobjdump prints).
cuobjdump -sass "$out/launch_fetch" | awk '/Function :/{k=$3} /\/\*[0-9a-f]{4,}\*\//{n[k]++} END{for (k in n) print k, 16*n[k]}' | sort > "$out/sass_bytes.txt"
m=dram__sectors_read.sum,dram__sectors_write.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum
m=$m,lts__t_sectors_lookup_miss.sum,sm__ctas_launched.sum,smsp__inst_executed.sum,gpu__time_duration.sum
for cc_mode in all none; do
  ncu --kernel-name regex:'^k_|code' --metrics "$m" --clock-control base --cache-control "$cc_mode" \
      --csv --print-units base "$out/launch_fetch" > "$out/ncu_$cc_mode.csv" 2> "$out/ncu_$cc_mode.err"
done
