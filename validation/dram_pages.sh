#!/usr/bin/env bash
# Runs validation/dram_pages.cu on GPU 0 (a copy's bytes in whole rows or in 128-byte pieces of
# many rows): validation/dram_pages.sh OUTDIR. Writes OUTDIR/dram_pages.csv and OUTDIR/run.log
# (the GPU and its clocks while running); data: tests/data/h200/dram_pages/.
set -euo pipefail
exec "$(dirname "$0")/timed_run.sh" dram_pages "${1:?usage: dram_pages.sh OUTDIR}"
