#!/usr/bin/env bash
# Runs validation/dram_pages.cu on GPU 0 (a copy's bytes in whole rows or in 128-byte pieces of
# many rows): validation/dram_pages.sh OUTDIR. Writes OUTDIR/dram_pages.csv and OUTDIR/run.log
# (the GPU and its clocks while running); data: tests/data/h200/dram_pages/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: dram_pages.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/dram_pages" "$here/dram_pages.cu"
{
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv -i 0
    "$out/dram_pages" "$out/dram_pages.csv"
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv -i 0
} > "$out/run.log" 2>&1
rm -f "$out/dram_pages"
