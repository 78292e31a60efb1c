#!/usr/bin/env bash
# Measures validation/turnover.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/turnover.sh OUTDIR [LAUNCHES] (default
# validation/turnover_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt, by validation/ncu_launches.sh.
# Data: tests/data/h200/turnover/.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" turnover '^copy_rounds' \
    "${1:?usage: turnover.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
