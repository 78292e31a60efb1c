#!/bin/bash
# Runs l1_blocks.cu on GPU 0 under ncu (caches flushed before each launch, clocks locked):
# OUT/l1_blocks${PLACE}_runs.csv (one row per launch) and OUT/l1_blocks${PLACE}_ncu.csv (ncu's
# long-format rows, launch ID i = row i), then prints each launch's L1 hit rate. PLACE=_sm places
# the regions by SM (l1_blocks.cu's `sm` mode).
#   OUT=dir [PLACE=_sm] validation/l1_blocks.sh
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/l1_blocks}
PLACE=${PLACE:-}
mode=${PLACE#_}
mkdir -p "$OUT"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$OUT/l1_blocks" l1_blocks.cu
ncu --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,launch__shared_mem_config_size,launch__occupancy_limit_warps,gpu__time_duration.sum \
    --cache-control all --clock-control base --kernel-name regex:region_reread --csv --print-units base \
    "$OUT/l1_blocks" "$OUT/l1_blocks${PLACE}_runs.csv" $mode | grep '^"' > "$OUT/l1_blocks${PLACE}_ncu.csv"
python3 - "$OUT" "$PLACE" <<'PY'
import collections, csv, sys
out, place = sys.argv[1], sys.argv[2]
runs = list(csv.DictReader(open(out + f"/l1_blocks{place}_runs.csv")))
m = collections.OrderedDict()
for r in csv.DictReader(open(out + f"/l1_blocks{place}_ncu.csv")):
    m.setdefault(r["ID"], {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
for run, x in zip(runs, m.values()):
    ld = x["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    miss = x["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"]
    first = int(run["lines_per_sm"]) * 132
    print(run["blocks_per_sm"], run["lines_per_block"], run["lines_per_sm"], "misses/loads %.3f" % (miss / ld),
          "re-read misses %.3f" % ((miss - first) / (ld - first)), "carve-out", int(x["launch__shared_mem_config_size"]))
PY
