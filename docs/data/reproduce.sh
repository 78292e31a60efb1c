#!/usr/bin/env bash
# Regenerates the sweeps, fits and figures of docs/fitting.md (about 1.5 hours on two cores; each
# sweep resumes where it stopped). Run from the repository root.
set -euo pipefail
G="cargo run --release --quiet --"
D=docs/data
I=docs/img

# Sweeps
$G sweep --kernel star4 --hw h200 --blocks all-1024 --domains 320x256x256 \
    --l2-scale 0.125,0.25,0.5,1 --models ernst2023,layer-condition --out $D/star4-h200.csv --resume
$G sweep --kernel star4 --hw h200 --blocks 512x2x1,128x8x1,64x4x4,32x2x16 \
    --domains square-xy:total=2^25:from=64:to=4096 --models layer-condition,ernst2023 \
    --out $D/star4-layer-condition.csv --resume
# Su et al.'s kernels: with the paper's 256 B "SMX line" (Table 2) and with 32 B sectors.
for line in 256 32; do
    set_line=""; suffix=""
    if [ $line != 256 ]; then set_line="--set smx_line_bytes=$line"; suffix="-line$line"; fi
    $G sweep --kernel su-7pt-1 --hw k20-rodc,h200 --blocks tabik-2d --domains 256x256x256 \
        $set_line --models su2015 --out $D/su-7pt-1$suffix.csv --resume
    $G sweep --kernel su-7pt-1-zblock --hw k20-rodc,h200 --blocks 32x4x1,64x4x1,32x8x1,128x2x1 \
        --domains 256x256x256 --set chunk_z=2,4,8,16 $set_line --models su2015 \
        --out $D/su-7pt-1-zblock$suffix.csv --resume
done

# Fits
for level in l1 l2; do
    $G fit --model gompertz --input $D/star4-h200.csv --x ${level}_oversubscription \
        --y ${level}_redundant_hit_rate --out $D/star4-h200-$level-fit.json
done
for suffix in "" -line32; do
    for hw in k20-rodc h200; do
        $G fit --model su2015 --input $D/su-7pt-1$suffix.csv --where hw=$hw \
            --out $D/su-7pt-1$suffix-$hw-fit.json
        $G fit --model su2015 --input $D/su-7pt-1-zblock$suffix.csv --where hw=$hw \
            --out $D/su-7pt-1-zblock$suffix-$hw-fit.json
    done
done

# Figures
for level in l1 l2; do
    $G plot hit-rate --input $D/star4-h200.csv --x ${level}_oversubscription \
        --y ${level}_redundant_hit_rate --fit $D/star4-h200-$level-fit.json \
        --out $I/star4-h200-$level-hit-rate.png
done
$G plot scatter --input $D/star4-h200.csv --where l2_scale=1 --x ernst2023_dram_load_bytes \
    --y l2_v_down_bytes --out $I/star4-h200-ernst-dram-scatter.png
$G plot layer-condition --input $D/star4-layer-condition.csv --out $I/star4-h200-layer-condition.png
$G plot block-table --input $D/star4-h200.csv --where l2_scale=1 --where block_z=1 \
    --metric dram__sectors_read.sum_bytes_per_lup --out $I/star4-h200-dram-block-table.png
$G plot composition --input $D/star4-h200.csv --where l2_scale=0.25 --level l2 \
    --out $I/star4-h200-l2-composition.png
$G plot block-table --input $D/su-7pt-1-line32.csv --where hw=k20-rodc \
    --metric su_smx_miss_ratio --out $I/su-k20-smx-miss-ratio.png
