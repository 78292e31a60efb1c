#!/usr/bin/env bash
# Measures validation/gemm.cu's launches on GPU 0 with Nsight Compute (caches flushed, base
# clocks, as the dev set): validation/gemm.sh OUTDIR [LAUNCHES] (default
# validation/gemm_launches.txt). Writes OUTDIR/ncu.csv (ncu's ID i is launch line i),
# OUTDIR/run.log, OUTDIR/sass.txt and OUTDIR/ptxas.txt, by validation/ncu_launches.sh, with the
# shared-memory wavefronts and the executed FFMAs beside the usual counters.
# Data: tests/data/h200/gemm/.
set -euo pipefail
EXTRA_METRICS=${EXTRA_METRICS:-l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum} \
    exec "$(dirname "$0")/ncu_launches.sh" gemm '^(naive|tiled)' \
    "${1:?usage: gemm.sh OUTDIR [LAUNCHES]}" ${2:+"$2"}
