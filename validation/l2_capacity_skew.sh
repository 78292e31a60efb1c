#!/usr/bin/env bash
# How far the warps of the L2 capacity sweep drift apart from pass to pass: runs
# `l2_capacity timed` on GPU 0 under ncu (caches flushed, clocks at base, as l2_capacity.csv was
# measured; two metrics, one replay, so the stamps are the profiled run's). Writes
# OUT/l2_capacity_timed_runs.csv, OUT/l2_capacity_stamps.csv.gz and OUT/l2_capacity_timed_ncu.csv
# (DRAM sectors read and time of each launch), and OUT/l2_capacity_skew.csv, the summary of
# validation/l2_capacity_skew.py.
#   OUT=dir validation/l2_capacity_skew.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/l2_capacity_skew}
mkdir -p "$OUT"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$OUT/l2_capacity" "$here/l2_capacity.cu"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader -i 0 > "$OUT/device.txt"
ncu --metrics gpu__time_duration.sum,dram__sectors_read.sum --cache-control all --clock-control base \
    --kernel-name regex:'^l2cap_timed' --export "$OUT/timed" --force-overwrite \
    "$OUT/l2_capacity" timed "$OUT/l2_capacity_timed_runs.csv" "$OUT/l2_capacity_stamps.csv" > "$OUT/ncu.log" 2>&1
ncu --import "$OUT/timed.ncu-rep" --csv --print-units base > "$OUT/l2_capacity_timed_ncu.csv"
gzip -f "$OUT/l2_capacity_stamps.csv"
python3 "$here/l2_capacity_skew.py" "$OUT" | tee "$OUT/l2_capacity_skew.csv"
