#!/bin/bash
# Runs l1_carveout.cu on GPU 0: once plainly (the chase timings) and once under ncu, without cache
# or clock control, for each launch's launch metrics (the carve-out the driver picked and the
# occupancy limits). Writes OUT/l1_carveout_runs.csv, OUT/l1_carveout_ncu.csv (ncu's long-format
# rows; launch ID i = row i of the runs) and prints each launch with its carve-out.
#   OUT=dir validation/l1_carveout.sh
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/l1_carveout}
mkdir -p "$OUT"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -std=c++17 -arch="sm_$cc" -Xptxas -v -o "$OUT/l1_carveout" l1_carveout.cu 2> "$OUT/ptxas.txt"
"$OUT/l1_carveout" "$OUT/l1_carveout_runs.csv"
ncu --metrics launch__shared_mem_config_size,launch__shared_mem_per_block_driver,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,launch__registers_per_thread,launch__block_size \
    --kernel-name 'regex:^(probe|lat_chase)' --csv --print-units base \
    "$OUT/l1_carveout" "$OUT/runs_under_ncu.csv" | grep '^"' > "$OUT/l1_carveout_ncu.csv"
python3 - "$OUT" <<'PY'
import collections, csv, sys
out = sys.argv[1]
runs = list(csv.DictReader(open(out + "/l1_carveout_runs.csv")))
metrics = collections.OrderedDict()
for r in csv.DictReader(open(out + "/l1_carveout_ncu.csv")):
    metrics.setdefault(r["ID"], {})[r["Metric Name"]] = r["Metric Value"]
for run, m in zip(runs, metrics.values()):
    print(run["kernel"], run["block_threads"], run["dynamic_shared_bytes"], run["lines"], run["cycles_per_load"],
          "carve-out", m["launch__shared_mem_config_size"], "blocks by smem/regs/warps",
          m["launch__occupancy_limit_shared_mem"], m["launch__occupancy_limit_registers"],
          m["launch__occupancy_limit_warps"])
PY
