#!/bin/bash
# Runs l1_index.cu on GPU 0: groups, chase and alloc beside the 8 KiB and the 32 KiB carve-out,
# sets beside the 8 KiB one: OUT/l1_index_{groups,chase,alloc}_carve{8,32}.csv and
# OUT/l1_index_sets_carve8.csv. validation/l1_index_fit.py reads them.
#   OUT=dir validation/l1_index.sh
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/l1_index}
mkdir -p "$OUT"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
bin=$(mktemp -d)/l1_index
nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$bin" l1_index.cu
for carve in 8 32; do
  arg=""; [ "$carve" = 32 ] && arg=carve32
  modes="groups chase alloc"; [ "$carve" = 8 ] && modes="groups sets chase alloc"
  for mode in $modes; do
    "$bin" $mode "$OUT/l1_index_${mode}_carve$carve.csv" $arg | tail -1
  done
done
