#!/usr/bin/env bash
# Measures validation/l1_request_rate.cu's launches (L1 hits: requests and wavefronts per SM
# cycle) with Nsight Compute at base clocks and prints the summary:
#   validation/l1_request_rate.sh OUTDIR [LAUNCHES]
# (LAUNCHES defaults to validation/l1_request_rate_launches.txt; patterns 8 and 9 and pattern 10:
# validation/l1_request_rate_mixes_launches.txt, validation/l1_request_rate_doubles_launches.txt)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: l1_request_rate.sh OUTDIR [LAUNCHES]}
launches=${2:-$here/l1_request_rate_launches.txt}
EXTRA_METRICS=sm__cycles_elapsed.avg,smsp__inst_executed_op_global_ld.sum \
  "$here/ncu_launches.sh" l1_request_rate '^hits' "$out" "$launches"
rm -f "$out/l1_request_rate"
python3 "$here/l1_request_rate_summary.py" "$out"
