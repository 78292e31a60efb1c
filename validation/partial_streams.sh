#!/usr/bin/env bash
# Measures validation/partial_streams.cu's launches on GPU 0 with Nsight Compute (caches flushed,
# base clocks, as the dev set): validation/partial_streams.sh OUTDIR [LAUNCHES] (default
# validation/partial_streams_launches.txt), by validation/ncu_launches.sh.
# Data: tests/data/h200/partial_streams/.
set -euo pipefail
exec "$(dirname "$0")/ncu_launches.sh" partial_streams '^shifted_' \
    "${1:?usage: partial_streams.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
