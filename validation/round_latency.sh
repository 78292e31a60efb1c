#!/usr/bin/env bash
# Runs validation/round_latency.cu on GPU 0 (docs/model.md "Time", the delay per round):
#   validation/round_latency.sh OUTDIR
# Writes OUTDIR/round_latency.csv (warps per SM, loads per round n, ns per round) and OUTDIR/run.log
# (the GPU and its SM clock while running); copy both to tests/data/h200/round_latency/.
set -euo pipefail
exec "$(dirname "$0")/timed_run.sh" round_latency "${1:?usage: round_latency.sh OUTDIR}"
