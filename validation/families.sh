#!/usr/bin/env bash
# Measures validation/families.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/families.sh OUTDIR [LAUNCHES] (default
# validation/families_launches.txt). Writes OUTDIR/ncu.csv (raw --csv --print-units base export;
# ncu's ID i is launch line i), OUTDIR/run.log (the program's "ID line" list), OUTDIR/sass.txt
# (cuobjdump -sass) and OUTDIR/ptxas.txt (registers per kernel). Data: tests/data/h200/families/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: families.sh OUTDIR [LAUNCHES]}
launches=${2:-$here/families_launches.txt}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -Xptxas -v -o "$out/families" "$here/families.cu" 2> "$out/ptxas.txt"
cuobjdump -sass "$out/families" > "$out/sass.txt"
"$out/families" "$launches" > "$out/run.log"
metrics=$(grep -v '^#' "$here/metrics.txt" | grep . | paste -sd, -),launch__registers_per_thread,sm__warps_active.avg.per_cycle_active,smsp__inst_executed.sum,sm__ctas_launched.sum
ncu --metrics "$metrics" --cache-control all --clock-control base --csv --print-units base \
    -k 'regex:^(jacobi2d_f32|jacobi2d_f64|transpose_f32|lbm_d3q19|triad_f32|triad_f64|scale_f32|empty_blocks)$' \
    "$out/families" "$launches" > "$out/ncu.csv" 2> "$out/ncu.err"
echo "profiled $(grep -c '"gpu__time_duration.sum"' "$out/ncu.csv") launches"
