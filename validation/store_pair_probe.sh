#!/usr/bin/env bash
# Fabric sectors of two SMs storing into the same lines in turn, in the two partitions or in one:
# validation/store_pair_probe.cu under ncu, caches flushed, base clocks. SMs 0 and 124 attach to
# one partition of the H100 and H200, SM 2 to the other (tests/data/*/micro/l2_partition_map.csv).
#   validation/store_pair_probe.sh OUTDIR       (TOGETHER=1 adds launches whose writers start at once)
# Writes OUTDIR/store_pair_runs.csv (the probe's rows; ncu ID = id) and store_pair_ncu.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: store_pair_probe.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd); cd "$out"
nvcc -O3 -arch=sm_90 -o store_pair_probe "$here/store_pair_probe.cu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > device.txt
{
  for rep in 1 2; do
    echo "none 0 0"
    for mode in part8 sector whole; do
      echo "$mode 0 2"; echo "$mode 2 0"; echo "$mode 0 124"; echo "$mode 0 0"
    done
    if [ "${TOGETHER:-0}" = 1 ]; then
      for mode in part8 whole; do
        echo "$mode 0 2 together"; echo "$mode 2 0 together"; echo "$mode 0 124 together"
      done
    fi
  done
} > store_pair_launches.txt
m=lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum
m=$m,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_write.sum
m=$m,lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum
m=$m,lts__t_sectors_op_write.sum,lts__t_sectors.sum,dram__sectors_read.sum,dram__sectors_write.sum
ncu --metrics "$m" --cache-control all --clock-control base -k regex:probe -f -o store_pair \
  --log-file store_pair.log ./store_pair_probe store_pair_launches.txt > store_pair_runs.csv
ncu --import store_pair.ncu-rep --csv --print-units base > store_pair_ncu.csv
