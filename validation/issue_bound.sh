#!/usr/bin/env bash
# Measures validation/issue_bound.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/issue_bound.sh OUTDIR [LAUNCHES] (default
# validation/issue_bound_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt, by validation/ncu_launches.sh, with the
# SMs' issue counters besides. Data: tests/data/h200/issue_bound/.
set -euo pipefail
export EXTRA_METRICS=sm__inst_executed.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,sm__cycles_elapsed.avg
exec "$(dirname "$0")/ncu_launches.sh" issue_bound '^(star4f|box27f|poly|fma_ilp)' \
    "${1:?usage: issue_bound.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
