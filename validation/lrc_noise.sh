#!/usr/bin/env bash
# Builds and profiles validation/lrc_noise.cu on GPU 0 (caches flushed, base clocks):
#   validation/lrc_noise.sh OUTDIR          the noise launches (tests/data/h200/lrc/noise/)
#   SET=bytes validation/lrc_noise.sh OUTDIR  the same sectors, other bytes (tests/data/h200/lrc/bytes/)
#   SET=miss validation/lrc_noise.sh OUTDIR   noise that misses (tests/data/h200/lrc/miss/)
#   SET=miss2 validation/lrc_noise.sh OUTDIR  the same, 1-line instructions and less noise (.../miss2/)
# Writes OUTDIR/lrc_noise.csv (the launches joined with their counters by micro_join.py),
# lrc_noise_runs.csv, lrc_noise_ncu.csv and device.txt. The readers are SMs 124 and 125, the two
# SMs of one TPC, which merged on every H100 and H200 measured (tests/data/{h100,h200}/lrc/).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: lrc_noise.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd); cd "$out"
nvcc -O3 -arch=sm_90 -o lrc_noise "$here/lrc_noise.cu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > device.txt
metrics=lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum
metrics=$metrics,l1tex__data_pipe_lsu_wavefronts.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
# Noise that misses (noise_kind 1): each of the modes in $1 with each noise pair after it, the list twice.
miss_launches() {
  local modes=$1; shift
  for rep in 1 2; do
    for mode in $modes; do
      for n in "$@"; do
        echo "$mode 256 0 $n 124 125 8 0 1"
      done
    done
  done
}
if [ "${SET:-noise}" = miss2 ]; then
  # Finer: 1-, 2- and 8-line instructions, 8-64 rounds on A, 32 on both.
  miss_launches "line full s1w8" "0 0" "8 0" "16 0" "32 0" "64 0" "32 32" > launches.txt
elif [ "${SET:-noise}" = miss ]; then
  # On A, on B, on both, or neither.
  miss_launches "sector s2 s1w8 s4w8 full" "0 0" "32 0" "128 0" "512 0" "0 128" "32 32" "128 128" "512 512" \
    > launches.txt
elif [ "${SET:-noise}" = bytes ]; then
  # B reads double OFFS ^ b_xor of each line where A reads OFFS: same sectors, other bytes
  # (sector, s2, s4w8) or the same bytes from other lanes (s1w8, full).
  for rep in 1 2; do
    for mode in sector s2 s4w8 s1w8 full; do
      for x in 0 1 2; do
        for n in "0 0" "128 128"; do
          echo "$mode 256 0 $n 124 125 8 $x"
        done
      done
    done
    # B half an instruction behind: its instructions straddle two of A's, each line read alike.
    for m in "sector 16" "s2 8" "s4w8 4" "s1w8 4" "full 1"; do
      for n in "0 0" "128 128"; do
        echo "${m% *} 256 ${m#* } $n 124 125"
      done
    done
  done > launches.txt
else {
  for rep in 1 2; do
    for mode in sector full; do
      for n in "0 0" "32 0" "128 0" "512 0" "2048 0" "0 512" "128 128" "512 512" "2048 2048"; do
        echo "$mode 256 0 $n 124 125"
      done
    done
    for mode in s1w8 s2 s3w8 s4w8; do
      for n in "0 0" "128 0" "0 128" "512 0" "128 128" "512 512"; do
        echo "$mode 256 0 $n 124 125"
      done
    done
    # Partly the same streams: B reads A's line for SHARED of every 8 lines, a line of its own else.
    for shared in 1 2 4; do
      for mode in full s1w8; do
        for n in "0 0" "128 0" "512 0" "0 128"; do
          echo "$mode 256 0 $n 124 125 $shared"
        done
      done
    done
    echo "solo 256 0 0 0 124 125"
    echo "solo 256 0 2048 2048 124 125"
    echo "sector 1024 0 0 0 124 125"
    echo "full 1024 0 0 0 124 125"
  done
} > launches.txt
fi
ncu --metrics "$metrics" --cache-control all --clock-control base -k regex:noisy -f \
  -o noise --log-file lrc_noise_ncu.log ./lrc_noise launches.txt > lrc_noise_runs.csv
ncu --import noise.ncu-rep --csv --print-units base > lrc_noise_ncu.csv
python3 "$here/micro_join.py" launch lrc_noise.csv lrc_noise_runs.csv lrc_noise_ncu.csv
rm -f lrc_noise ./*.ncu-rep
