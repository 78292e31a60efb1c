#!/usr/bin/env bash
# The home side racing a far miss (validation/l2_race_probe.cu) under ncu: SMs 0 and 2 (opposite
# sides of the L2 on the measured maps, either first) and 0 and 1 (one side), 4096 or 256 lines,
# at delays of 0-5000 ns, twice.
#   validation/l2_race_probe.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: l2_race_probe.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd); cd "$out"
nvcc -O3 -arch=sm_90 -o l2_race_probe "$here/l2_race_probe.cu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > device.txt
{
  for rep in 1 2; do
    for lines in 4096 256; do
      for pair in "0 2" "2 0" "0 1"; do
        for d in 0 50 100 200 500 1000 1500 2000 3000 4000 5000; do echo "$pair $d $lines"; done
      done
    done
  done
} > race_launches.txt
m=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
m=$m,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__sectors_read.sum
ncu --metrics "$m" --cache-control all --clock-control base -k regex:probe -f -o race \
  --log-file race.log ./l2_race_probe race_launches.txt > race_runs.csv
ncu --import race.ncu-rep --csv --print-units base > race_ncu.csv
