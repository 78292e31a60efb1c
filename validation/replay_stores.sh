#!/usr/bin/env bash
# Measures validation/replay_stores.cu's launches on GPU 0 with Nsight Compute (caches flushed,
# base clocks): validation/replay_stores.sh OUTDIR [LAUNCHES] (default
# validation/replay_stores_launches.txt), by validation/ncu_launches.sh, with the data pipe's
# wavefronts split by memory space. Data: tests/data/h100/replay_stores/ (the default launches),
# tests/data/h200/replay_smem/ (validation/replay_smem_launches.txt).
set -euo pipefail
EXTRA_METRICS=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum \
exec "$(dirname "$0")/ncu_launches.sh" replay_stores '^[rf][0-9]+_' \
    "${1:?usage: replay_stores.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
