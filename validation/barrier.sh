#!/usr/bin/env bash
# Measures validation/barrier.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/barrier.sh OUTDIR [LAUNCHES] (default
# validation/barrier_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt, by validation/ncu_launches.sh.
# Data: tests/data/h200/barrier/.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" barrier '^(phases|sync|exchange)_r' \
    "${1:?usage: barrier.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
