#!/usr/bin/env bash
# Runs validation/loaded_latency.cu on GPU 0 (docs/model.md "Time", the delay under load):
#   validation/loaded_latency.sh OUTDIR
# Writes OUTDIR/loaded_latency.csv (a probe warp's ns per dependent load beside S streaming warps
# an SM, and their GB/s) and OUTDIR/run.log (the GPU and its clocks while running); data:
# tests/data/h200/loaded_latency/.
set -euo pipefail
exec "$(dirname "$0")/timed_run.sh" loaded_latency "${1:?usage: loaded_latency.sh OUTDIR}"
