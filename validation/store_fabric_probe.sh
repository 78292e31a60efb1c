#!/usr/bin/env bash
# Fabric sectors of one SM's stores, whole sectors against parts of one, and of a launch that
# stores nothing: validation/store_fabric_probe.cu under ncu, caches flushed, base clocks.
#   validation/store_fabric_probe.sh OUTDIR
# Writes OUTDIR/store_fabric_runs.csv (the probe's rows; ncu ID = id) and store_fabric_ncu.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: store_fabric_probe.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd); cd "$out"
nvcc -O3 -arch=sm_90 -o store_fabric_probe "$here/store_fabric_probe.cu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > device.txt
{
  for rep in 1 2; do
    echo "none 1024 0"
    for sm in 124 2; do
      for mode in whole part8 part16 part32 quad; do echo "$mode 1024 $sm"; done
      echo "part8 32 $sm"
    done
  done
} > store_fabric_launches.txt
m=lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_write.sum
m=$m,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum
m=$m,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum
m=$m,dram__sectors_read.sum,dram__sectors_write.sum,lts__t_sectors_srcunit_ltcfabric_op_write.sum
m=$m,lts__t_sectors_srcunit_ltcfabric_op_read.sum
# Keep the metrics this ncu knows (the fabric's per-op split is not on every version).
known=$(ncu --query-metrics --chip gh100 | awk '{print $1}')
m=$(tr , '\n' <<< "$m" | while read -r x; do grep -qx "${x%.sum}" <<< "$known" && echo "$x"; done | paste -sd,)
echo "metrics: $m" > store_fabric_metrics.txt
ncu --metrics "$m" --cache-control all --clock-control base -k regex:probe -f -o store_fabric \
  --log-file store_fabric.log ./store_fabric_probe store_fabric_launches.txt > store_fabric_runs.csv
ncu --import store_fabric.ncu-rep --csv --print-units base > store_fabric_ncu.csv
