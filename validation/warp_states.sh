#!/usr/bin/env bash
# What a warp waits on, per instruction it issues, in the launches of validation/'s kernel programs
# (issue 53, item 3: the time a warp spends on its own instructions, which the time model's delay
# leaves out). Nsight Compute's warp-state counters (smsp__average_warps_issue_stalled_REASON_
# per_issue_active.ratio: warp cycles in that state per issued instruction) beside the time, the
# instructions and the active warps, caches flushed, base clocks, as the programs' own scripts:
#   validation/warp_states.sh OUTDIR [PROGRAM ...]   (default: every program below)
# Writes OUTDIR/PROGRAM.csv (raw --csv --print-units base; ncu's ID i is launch line i of
# validation/PROGRAM_launches.txt) and OUTDIR/PROGRAM.log (the program's "ID line" list).
# Summary: python3 validation/warp_states_summary.py OUTDIR. Data: tests/data/h100/warp_states/ (an H100
# SXM, the H200's SM and compiler, 2026-12-07).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: warp_states.sh OUTDIR [PROGRAM ...]}
shift
declare -A kernels=(
    [tile_rows]='^(rowcopy|tilecopy|transpose)'
    [barrier]='^(phases|sync|exchange)_r'
    [issue_bound]='^(star4f|box27f|poly|fma_ilp)'
    [gemm]='^(naive|tiled)'
    [reductions]='^(tree|shfl|dot)'
    [families]='^(jacobi2d_f32|jacobi2d_f64|transpose_f32|lbm_d3q19|triad_f32|triad_f64|scale_f32)$'
    [streams]='^(read|copy)_k'
    [turnover]='^copy_rounds'
    [lbm_parts]='^lbm_'
    [partial_streams]='^shifted_'
)
programs=("$@")
if [[ ${#programs[@]} -eq 0 ]]; then
    programs=(tile_rows barrier issue_bound gemm reductions families streams turnover lbm_parts partial_streams)
fi
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
reasons=(barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard
    math_pipe_throttle membar mio_throttle misc no_instruction not_selected selected sleeping
    short_scoreboard tex_throttle wait)
metrics=gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.per_cycle_active
metrics+=,smsp__average_warp_latency_per_inst_issued.ratio,smsp__issue_active.avg.per_cycle_active
for r in "${reasons[@]}"; do
    metrics+=,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
for name in "${programs[@]}"; do
    regex=${kernels[$name]:?unknown program $name}
    nvcc -O3 -arch="sm_$cc" -o "$out/$name" "$here/$name.cu"
    "$out/$name" "$here/${name}_launches.txt" > "$out/$name.log"
    ncu --metrics "$metrics" --cache-control all --clock-control base --csv --print-units base \
        -k "regex:$regex" "$out/$name" "$here/${name}_launches.txt" > "$out/$name.csv" 2> "$out/$name.err"
    rm -f "$out/$name"
    echo "$name: profiled $(grep -c '"gpu__time_duration.sum"' "$out/$name.csv") launches"
done
