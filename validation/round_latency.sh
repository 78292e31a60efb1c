#!/usr/bin/env bash
# Runs validation/round_latency.cu on GPU 0 (docs/model.md "Time", the delay per round):
#   validation/round_latency.sh OUTDIR
# Writes OUTDIR/round_latency.csv (warps per SM, loads per round n, ns per round) and OUTDIR/run.log
# (the GPU and its SM clock while running); copy both to tests/data/h200/round_latency/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: round_latency.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/round_latency" "$here/round_latency.cu"
{
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv -i 0
    "$out/round_latency" "$out/round_latency.csv"
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv -i 0
} > "$out/run.log" 2>&1
rm -f "$out/round_latency"
