#!/usr/bin/env bash
# Measures validation/reductions.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/reductions.sh OUTDIR [LAUNCHES] (default
# validation/reductions_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt, by validation/ncu_launches.sh.
# Data: tests/data/h200/reductions/.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" reductions '^(tree|shfl|dot)' \
    "${1:?usage: reductions.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
