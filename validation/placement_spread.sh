#!/usr/bin/env bash
# How much the counters of one launch move with the physical pages its arrays get. The L2's sets
# and home partitions are functions of physical addresses, which a program cannot choose; a buffer
# of PAD MiB allocated first moves the arrays to other pages (their virtual addresses stay 32 MiB
# aligned). For each PAD:
#   OUT/padPAD/                  validation/measure.sh of LAUNCHES (ncu.csv, manifest.toml, run.log)
#   OUT/capacity_*_padPAD.csv    with CAPACITY=1, l2_capacity.cu at the capacity edge (m = 16..28,
#                                rot 1 and 8) under ncu: its runs, block placement and ncu export,
#                                the re-read misses of all pads in OUT/capacity.csv
# STENCILS=0 skips the stencil launches (on the H200, whose stencil launches beyond the dev set are
# kept for independent checks).
#   OUT=dir [PADS="0 2 6 14 30 96 992"] [CAPACITY=1] validation/placement_spread.sh [LAUNCHES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/placement_spread}
launches=${1:-$here/launches-spread.txt}
mkdir -p "$OUT"
rm -f "$OUT/capacity.csv"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
for pad in ${PADS:-0 2 6 14 30 96 992}; do
  if [ "${STENCILS:-1}" = 1 ]; then
    PAD_MB=$pad "$here/measure.sh" "$OUT/pad$pad" "$launches" > "$OUT/measure_pad$pad.log" 2>&1
  fi
  if [ "${CAPACITY:-0}" = 1 ]; then
    [ -x "$OUT/l2_capacity" ] || nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$OUT/l2_capacity" "$here/l2_capacity.cu"
    M_LIST="16 18 20 22 24 26 28" ROTS="1 8" PAD_MB=$pad \
      ncu --metrics gpu__time_duration.sum,dram__sectors_read.sum --cache-control all --clock-control base \
          --kernel-name regex:'^l2cap_sweep' --export "$OUT/capacity_pad$pad" --force-overwrite \
          "$OUT/l2_capacity" "$OUT/capacity_runs_pad$pad.csv" "$OUT/capacity_blocks_pad$pad.csv" > "$OUT/capacity_pad$pad.log" 2>&1
    ncu --import "$OUT/capacity_pad$pad.ncu-rep" --csv --print-units base > "$OUT/capacity_ncu_pad$pad.csv"
    python3 - "$OUT/capacity_runs_pad$pad.csv" "$OUT/capacity_ncu_pad$pad.csv" "$pad" >> "$OUT/capacity.csv" <<'PY'
import csv, sys
runs = list(csv.DictReader(open(sys.argv[1])))
ids = {}
for r in csv.DictReader(open(sys.argv[2])):
    if r["Metric Name"] == "dram__sectors_read.sum":
        ids[int(r["ID"])] = float(r["Metric Value"].replace(",", ""))
for run, i in zip(runs, sorted(ids)):
    per = float(run["sectors_per_pass"]); p = int(run["passes"])
    print(f"{sys.argv[3]},{run['rot']},{run['m']},{run['footprint_bytes']},{(ids[i] - per) / ((p - 1) * per):.4f}")
PY
  fi
done
[ -f "$OUT/capacity.csv" ] && sed -i '1i pad_mib,rot,m,footprint_bytes,reread_misses' "$OUT/capacity.csv"
exit 0
