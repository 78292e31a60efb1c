#!/usr/bin/env bash
# Counts the executed warp instructions (smsp__inst_executed.sum) of launches measured earlier
# without them, on GPU 0 with Nsight Compute (caches flushed, base clocks, with the time and the
# blocks to check each launch against its first measurement): the H200 dev set (the first 77
# lines of validation/launches.txt), star1-zloop with few blocks
# (validation/launches-zloop-fewblocks.txt), and the shared-memory kernels
# (validation/shared_transpose_launches.txt, validation/shared_stencil_launches.txt). For
# validation/instruction_fit.py (issue 53: what a warp's instructions cost).
#   validation/instructions.sh OUTDIR   -> OUTDIR/{dev,zloop,transpose,stencil}_instructions.csv
# (raw `ncu --csv --print-units base` exports; ncu's ID i is line i of the launch list). Data:
# tests/data/h200/instructions/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: instructions.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$out/stencils" "$here/stencils.cu"
nvcc -O3 -arch="sm_$cc" -o "$out/new_kernels" "$here/new_kernels.cu"
nvcc -O3 -arch="sm_$cc" -o "$out/shared_stencil" "$here/shared_stencil.cu"
grep -v '^#' "$here/launches.txt" | grep . | head -77 > "$out/dev_launches.txt"
metrics=smsp__inst_executed.sum,gpu__time_duration.sum,sm__ctas_launched.sum,launch__registers_per_thread
count() {  # NAME PROGRAM LAUNCHES [KERNEL_REGEX]
  ncu --metrics "$metrics" --cache-control all --clock-control base --csv --print-units base \
      ${4:+-k "regex:$4"} "$out/$2" "$3" > "$out/$1_instructions.csv" 2> "$out/$1.err"
  echo "$1: $(grep -c '"smsp__inst_executed.sum"' "$out/$1_instructions.csv") launches"
}
count dev stencils "$out/dev_launches.txt" '^(star|box27|copy)'
count zloop stencils "$here/launches-zloop-fewblocks.txt" '^(star|box27|copy)'
count transpose new_kernels "$here/shared_transpose_launches.txt" '^(transpose_tiled|transpose_naive|jacobi2d)'
count stencil shared_stencil "$here/shared_stencil_launches.txt"
