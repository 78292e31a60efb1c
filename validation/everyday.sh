#!/usr/bin/env bash
# Measures validation/everyday.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/everyday.sh OUTDIR [LAUNCHES] (default
# validation/everyday_launches.txt). Writes OUTDIR/ncu.csv, run.log, sass.txt and ptxas.txt by
# validation/ncu_launches.sh. Data: tests/data/h100/everyday/ (an H100 SXM, 2026-12-06).
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" everyday \
    '^(saxpy_gridstride|copy_float4|aos_update|conv2d_5x5|block_sum|block_sum_strided|block_scan)$' \
    "${1:?usage: everyday.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
