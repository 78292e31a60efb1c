#!/usr/bin/env bash
# Measures validation/lbm_parts.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/lbm_parts.sh OUTDIR [LAUNCHES] (default
# validation/lbm_parts_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt, by validation/ncu_launches.sh.
# Data: tests/data/h200/lbm_parts/.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" lbm_parts '^lbm_' \
    "${1:?usage: lbm_parts.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
