#!/usr/bin/env bash
# Measures the launches of one of validation/'s kernel programs on GPU 0 with Nsight Compute
# (caches flushed, base clocks, as the dev set). NAME.cu reads lines of LAUNCHES and prints
# "ID line" for each launch, so ncu's ID i is launch line i:
#   validation/ncu_launches.sh NAME KERNEL_REGEX OUTDIR [LAUNCHES]
# (LAUNCHES defaults to validation/NAME_launches.txt). Writes OUTDIR/ncu.csv (raw --csv
# --print-units base export of validation/metrics.txt and four more), OUTDIR/run.log (the
# program's "ID line" list), OUTDIR/sass.txt (cuobjdump -sass) and OUTDIR/ptxas.txt (registers
# per kernel); EXTRA_METRICS (comma-separated) adds counters. families.sh, streams.sh, turnover.sh and lbm_parts.sh call it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: ncu_launches.sh NAME KERNEL_REGEX OUTDIR [LAUNCHES]"
name=${1:?$usage}
regex=${2:?$usage}
out=${3:?$usage}
launches=${4:-$here/${name}_launches.txt}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -Xptxas -v -o "$out/$name" "$here/$name.cu" 2> "$out/ptxas.txt"
cuobjdump -sass "$out/$name" > "$out/sass.txt"
"$out/$name" "$launches" > "$out/run.log"
metrics=$(grep -v '^#' "$here/metrics.txt" | grep . | paste -sd, -),launch__registers_per_thread,sm__warps_active.avg.per_cycle_active,smsp__inst_executed.sum,sm__ctas_launched.sum${EXTRA_METRICS:+,$EXTRA_METRICS}
ncu --metrics "$metrics" --cache-control all --clock-control base --csv --print-units base \
    -k "regex:$regex" "$out/$name" "$launches" > "$out/ncu.csv" 2> "$out/ncu.err"
echo "profiled $(grep -c '"gpu__time_duration.sum"' "$out/ncu.csv") launches"
