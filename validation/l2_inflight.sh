#!/usr/bin/env bash
# Builds and profiles validation/l2_inflight.cu on GPU 0 (caches flushed, base clocks):
#   validation/l2_inflight.sh OUTDIR [pairs A[,B...] REPS]   -> l2_inflight.csv (the launches joined
#   with their counters by micro_join.py), l2_inflight_runs.csv, l2_inflight_ncu.csv; with "pairs":
#   SM A (then B, ...) with every other SM, REPS rounds
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: l2_inflight.sh OUTDIR [pairs A REPS]}
shift
mkdir -p "$out"; cd "$out"
nvcc -O3 -arch=sm_90 -o l2_inflight "$here/l2_inflight.cu"
m=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum
m=$m,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
m=$m,lts__t_sectors_srcunit_ltcfabric.sum,dram__sectors_read.sum,gpu__time_duration.sum
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > device.txt
ncu --metrics $m --cache-control all --clock-control base -k regex:sweep -f -o report \
  --log-file l2_inflight_ncu.log ./l2_inflight "$@" > l2_inflight_runs.csv
ncu --import report.ncu-rep --csv --print-units base > l2_inflight_ncu.csv
python3 "$here/micro_join.py" launch l2_inflight.csv l2_inflight_runs.csv l2_inflight_ncu.csv
rm -f l2_inflight report.ncu-rep
