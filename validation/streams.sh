#!/usr/bin/env bash
# Measures validation/streams.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/streams.sh OUTDIR [LAUNCHES] (default
# validation/streams_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt, by validation/ncu_launches.sh.
# Data: tests/data/h200/streams/.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" streams '^(read|copy)_k' \
    "${1:?usage: streams.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
