#!/usr/bin/env bash
# Regenerates the reports and figures of docs/validation.md (about an hour on two cores, 15 minutes
# on 16: each GPU's set holds 36 full star4 launches; the GPU host did the sets of 2026-11-29 in 12). Run from the repository root.
# G (the command), D (the reports' folder) and I (the figures') may be set from outside; with
# CONTINUE=1 a report already written is kept and an interrupted one resumed from its journal
# (for runs cut short by a time limit: the same binary must finish it).
set -euo pipefail
G=${G:-"cargo run --release --quiet --"}
D=${D:-docs/data}
I=${I:-docs/img}
# report ARGS... --out FILE: `validate ARGS --format json --out FILE`, skipped or resumed under
# CONTINUE=1.
report() {
    local out=${*: -1}
    local mode=--force
    if [ "${CONTINUE:-0}" = 1 ]; then
        [ -e "$out" ] && [ ! -e "$out.journal" ] && return 0
        [ -e "$out.journal" ] && mode=--resume
    fi
    $G validate "${@:1:$#-2}" --format json --out "$out" $mode
}

report --measured tests/data/h200_dev_set.csv --hw h200 --out $D/validation-h200.json
report --measured tests/data/h100/ncu.csv --manifest tests/data/h100/manifest.toml --hw h100-sxm \
    --out $D/validation-h100.json
report --measured tests/data/h100/timing_ncu.csv --manifest tests/data/h100/timing_manifest.toml \
    --hw h100-sxm --out $D/validation-h100-timing.json
report --measured tests/data/h100/edges/ncu.csv --manifest tests/data/h100/edges/manifest.toml \
    --hw h100-sxm --out $D/validation-h100-edges.json
report --measured tests/data/h100/pitch/ncu.csv --manifest tests/data/h100/pitch/manifest.toml \
    --hw h100-sxm --out $D/validation-h100-pitch.json
report --measured tests/data/h100/narrow/ncu.csv --manifest tests/data/h100/narrow/manifest.toml \
    --hw h100-sxm --out $D/validation-h100-narrow.json
# The time model's kernel families (issue 53): lifted from validation/families.cu (needs nvcc:
# scripts/install-nvcc.sh), star1-zloop with few blocks per SM, the H100's new kernels and the H200's
# shared-memory kernels on their traces.
report --measured tests/data/h200/families/ncu.csv --manifest tests/data/h200/families/manifest.toml \
    --hw h200 --out $D/validation-h200-families.json
report --measured tests/data/h200/zloop_fewblocks/ncu.csv --manifest tests/data/h200/zloop_fewblocks/manifest.toml \
    --hw h200 --out $D/validation-h200-zloop-fewblocks.json
report --measured tests/data/h100/new_kernels/ncu.csv --manifest tests/data/h100/new_kernels/manifest.toml \
    --hw h100-sxm --out $D/validation-h100-new-kernels.json
# Everyday kernels on the H100 (validation/everyday.cu, lifted; needs nvcc; docs/validation.md).
report --measured tests/data/h100/everyday/ncu.csv --manifest tests/data/h100/everyday/manifest.toml \
    --hw h100-sxm --out $D/validation-h100-everyday.json
# Contended atomics on the H200 (validation/atomics_contention.cu, lifted; needs nvcc).
report --measured tests/data/h200/atomics_contention/ncu.csv \
    --manifest tests/data/h200/atomics_contention/manifest.toml --hw h200 \
    --out $D/validation-h200-atomics.json
# The streams, lattice-Boltzmann parts, partly written streams, block-turnover, barrier, tile-row,
# issue-rate, block-reduction and matrix-product benchmarks, lifted from their .cu sources (validation/*.cu; needs nvcc).
for s in streams:streams streams_narrow:streams-narrow streams_occupancy:streams-occupancy \
         lbm_parts:lbm-parts partial_streams:partial-streams turnover:turnover barrier:barrier \
         tile_rows:tile-rows issue_bound:issue-bound reductions:reductions gemm:gemm; do
    report --measured tests/data/h200/${s%%:*}/ncu.csv --manifest tests/data/h200/${s%%:*}/manifest.toml \
        --hw h200 --out $D/validation-h200-${s##*:}.json
done
for s in transpose stencil; do
    report --measured tests/data/h200/shared/${s}_ncu.csv --manifest tests/data/h200/shared/${s}_manifest.toml \
        --hw h200 --out $D/validation-h200-$([ $s = stencil ] && echo shared-stencil || echo transpose).json
done
for gpu in h200 h100; do
    $G plot validation --input $D/validation-$gpu.json --size 1800x1350 --out $I/validation-$gpu.png
    $G plot validation --input $D/validation-$gpu.json --size 1400x650 \
        --metric lts__t_sectors_srcunit_tex_op_read.sum --metric dram__sectors_read.sum \
        --out $I/validation-$gpu-reads.png
    $G plot validation --input $D/validation-$gpu.json --where kernel=star4 --size 1400x650 \
        --metric dram__sectors_read.sum --metric lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum \
        --out $I/validation-$gpu-star4-dram.png
done
