#!/usr/bin/env bash
# Measures validation/turnover.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/turnover.sh OUTDIR [LAUNCHES] (default
# validation/turnover_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt. Data: tests/data/h200/turnover/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: turnover.sh OUTDIR [LAUNCHES]}
launches=${2:-$here/turnover_launches.txt}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -Xptxas -v -o "$out/turnover" "$here/turnover.cu" 2> "$out/ptxas.txt"
cuobjdump -sass "$out/turnover" > "$out/sass.txt"
"$out/turnover" "$launches" > "$out/run.log"
metrics=$(grep -v '^#' "$here/metrics.txt" | grep . | paste -sd, -),launch__registers_per_thread,sm__warps_active.avg.per_cycle_active,smsp__inst_executed.sum,sm__ctas_launched.sum
ncu --metrics "$metrics" --cache-control all --clock-control base --csv --print-units base \
    -k 'regex:^copy_rounds' "$out/turnover" "$launches" > "$out/ncu.csv" 2> "$out/ncu.err"
echo "profiled $(grep -c '"gpu__time_duration.sum"' "$out/ncu.csv") launches"
