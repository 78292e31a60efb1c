#!/usr/bin/env bash
# How many sectors cross the L2 fabric for one SM's reads of a fresh 1 MiB buffer, whole lines
# against one sector a line, and for a launch that reads nothing (the narrow blocks' fabric gap,
# docs/validation.md "Partition map"): validation/lrc_probe.cu's `solo` (32 lanes on consecutive
# doubles: all 4 sectors of each line) and `sector` (32 lanes on 32 lines, sector 0 of each) with
# one reading SM, and `full` with none. Caches flushed, base clocks.
#   validation/fabric_probe.sh OUTDIR
# Writes OUTDIR/fabric_probe_runs.csv (the probe's rows; ncu ID = id) and fabric_probe_ncu.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: fabric_probe.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd); cd "$out"
nvcc -O3 -arch=sm_90 -o lrc_probe "$here/lrc_probe.cu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > device.txt
{
  for rep in 1 2; do
    echo "full 1024 0 - -"
    for sm in 124 2; do
      echo "solo 1024 0 $sm $sm"
      echo "sector 1024 0 $sm -"
      echo "sector 32 0 $sm -"
    done
  done
} > fabric_launches.txt
m=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum
m=$m,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_ltcfabric.sum
m=$m,dram__sectors_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum
ncu --metrics "$m" --cache-control all --clock-control base -k regex:probe -f -o fabric \
  --log-file fabric.log ./lrc_probe fabric_launches.txt > fabric_probe_runs.csv
ncu --import fabric.ncu-rep --csv --print-units base > fabric_probe_ncu.csv
