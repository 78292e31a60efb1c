#!/usr/bin/env bash
# Measures validation/dirty_budget.cu's launches on GPU 0 with Nsight Compute (caches flushed,
# base clocks): validation/dirty_budget.sh OUTDIR [LAUNCHES] (default
# validation/dirty_budget_launches.txt). Writes OUTDIR/ncu.csv, run.log, sass.txt and ptxas.txt.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" dirty_budget '^(fill|fill_half)$' \
    "${1:?usage: dirty_budget.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
