#!/usr/bin/env bash
# Measures validation/store_merge.cu's launches on GPU 0 with Nsight Compute (caches flushed,
# base clocks): validation/store_merge.sh OUTDIR [LAUNCHES] (default
# validation/store_merge_launches.txt), by validation/ncu_launches.sh, with the L2's write
# requests beside its write sectors. Summary: python3 validation/store_merge_summary.py OUTDIR.
set -euo pipefail
EXTRA_METRICS=${EXTRA_METRICS:-lts__t_requests_srcunit_tex_op_write.sum} \
exec "$(dirname "$0")/ncu_launches.sh" store_merge \
    '^(pair_row|pair_gap|pair_alu|pair_load|pair_store|pair_sync|pair_warps|half_only)$' \
    "${1:?usage: store_merge.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
