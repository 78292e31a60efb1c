#!/usr/bin/env bash
# Measures validation/tile_rows.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/tile_rows.sh OUTDIR [LAUNCHES] (default
# validation/tile_rows_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt, by validation/ncu_launches.sh.
# Data: tests/data/h200/tile_rows/.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" tile_rows '^(rowcopy|tilecopy|transpose)' \
    "${1:?usage: tile_rows.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
