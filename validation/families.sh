#!/usr/bin/env bash
# Measures validation/families.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/families.sh OUTDIR [LAUNCHES] (default
# validation/families_launches.txt). Writes OUTDIR/ncu.csv (raw --csv --print-units base export;
# ncu's ID i is launch line i), OUTDIR/run.log (the program's "ID line" list), OUTDIR/sass.txt
# (cuobjdump -sass) and OUTDIR/ptxas.txt (registers per kernel), by validation/ncu_launches.sh.
# Data: tests/data/h200/families/.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" families \
    '^(jacobi2d_f32|jacobi2d_f64|transpose_f32|lbm_d3q19|triad_f32|triad_f64|scale_f32|empty_blocks)$' \
    "${1:?usage: families.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
