#!/usr/bin/env bash
# Regenerates the reports and figures of docs/validation.md (about an hour on two cores, 15 minutes
# on 16: each GPU's set holds 36 full star4 launches). Run from the repository root.
set -euo pipefail
G="cargo run --release --quiet --"
D=docs/data
I=docs/img

$G validate --measured tests/data/h200_dev_set.csv --hw h200 --format json --out $D/validation-h200.json
$G validate --measured tests/data/h100/ncu.csv --manifest tests/data/h100/manifest.toml --hw h100-sxm \
    --format json --out $D/validation-h100.json
$G validate --measured tests/data/h100/timing_ncu.csv --manifest tests/data/h100/timing_manifest.toml \
    --hw h100-sxm --format json --out $D/validation-h100-timing.json
$G validate --measured tests/data/h100/edges/ncu.csv --manifest tests/data/h100/edges/manifest.toml \
    --hw h100-sxm --format json --out $D/validation-h100-edges.json
$G validate --measured tests/data/h100/pitch/ncu.csv --manifest tests/data/h100/pitch/manifest.toml \
    --hw h100-sxm --format json --out $D/validation-h100-pitch.json
$G validate --measured tests/data/h100/narrow/ncu.csv --manifest tests/data/h100/narrow/manifest.toml \
    --hw h100-sxm --format json --out $D/validation-h100-narrow.json
for gpu in h200 h100; do
    $G plot validation --input $D/validation-$gpu.json --size 1800x1350 --out $I/validation-$gpu.png
    $G plot validation --input $D/validation-$gpu.json --size 1400x650 \
        --metric lts__t_sectors_srcunit_tex_op_read.sum --metric dram__sectors_read.sum \
        --out $I/validation-$gpu-reads.png
    $G plot validation --input $D/validation-$gpu.json --where kernel=star4 --size 1400x650 \
        --metric dram__sectors_read.sum --metric lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum \
        --out $I/validation-$gpu-star4-dram.png
done
