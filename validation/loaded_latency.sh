#!/usr/bin/env bash
# Runs validation/loaded_latency.cu on GPU 0 (docs/model.md "Time", the delay under load):
#   validation/loaded_latency.sh OUTDIR
# Writes OUTDIR/loaded_latency.csv (a probe warp's ns per dependent load beside S streaming warps
# an SM, and their GB/s) and OUTDIR/run.log (the GPU and its clocks while running); data:
# tests/data/h200/loaded_latency/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: loaded_latency.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/loaded_latency" "$here/loaded_latency.cu"
{
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv -i 0
    "$out/loaded_latency" "$out/loaded_latency.csv"
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv -i 0
} > "$out/run.log" 2>&1
rm -f "$out/loaded_latency"
