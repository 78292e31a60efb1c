#!/usr/bin/env bash
# Builds validation/NAME.cu for GPU 0 and runs it once without a profiler (it times itself):
#   validation/timed_run.sh NAME OUTDIR
# Writes OUTDIR/NAME.csv (the program's output) and OUTDIR/run.log (the GPU and its clocks before
# and after). For round_latency.sh, loaded_latency.sh and dram_pages.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=${1:?usage: timed_run.sh NAME OUTDIR}
out=${2:?usage: timed_run.sh NAME OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/$name" "$here/$name.cu"
{
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv -i 0
    "$out/$name" "$out/$name.csv"
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv -i 0
} > "$out/run.log" 2>&1
rm -f "$out/$name"
