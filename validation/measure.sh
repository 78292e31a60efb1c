#!/usr/bin/env bash
# Measures the validation kernels on GPU 0 with Nsight Compute and writes what `gputraffic validate`
# reads: OUTDIR/ncu.csv (the raw long-format export of `ncu --csv --print-units base`) and
# OUTDIR/manifest.toml (which trace, domain, block and parameters each profiled launch is).
#
#   validation/measure.sh OUTDIR [LAUNCHES]        # LAUNCHES defaults to validation/launches.txt
#   gputraffic validate --measured OUTDIR/ncu.csv --manifest OUTDIR/manifest.toml --hw <gpu>
#
# Needs nvcc and ncu on PATH (and permission to read GPU counters). Caches are flushed before
# every kernel and clocks locked to base (ncu's defaults, spelled out), as for the H200 dev set.
# With PROBES=1 it also builds sched.cu and records block-to-SM placement logs and the
# partial-sector store probe (OUTDIR/sched_*.csv, OUTDIR/probes.csv), and the DRAM stream rate
# (OUTDIR/stream.csv). With MICRO=1 it also runs the microbenchmarks (validation/micro.sh: latency,
# bandwidth versus bytes in flight, launch overhead, L1 wavefronts, L1 geometry; CSVs in OUTDIR).
# STENCILS=0 skips the stencil launches (and the manifest), e.g. `STENCILS=0 MICRO=1` for the
# microbenchmarks alone. EXTRA_METRICS (comma-separated) adds metrics to metrics.txt's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: measure.sh OUTDIR [LAUNCHES]}
launches=${2:-$here/launches.txt}
mkdir -p "$out"
out=$(cd "$out" && pwd)

cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
if [ "${STENCILS:-1}" = 1 ]; then
nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$out/stencils" "$here/stencils.cu"
metrics=$(grep -v '^#' "$here/metrics.txt" | grep . | paste -sd, -)${EXTRA_METRICS:+,$EXTRA_METRICS}

# A plain run first: checks every launch and records the device and the buffer alignment.
"$out/stencils" "$launches" > "$out/run.log"
ncu --metrics "$metrics" --cache-control all --clock-control base \
    --kernel-name 'regex:^(star|box27|copy)' \
    --export "$out/report" --force-overwrite "$out/stencils" "$launches" > "$out/ncu.log" 2>&1
ncu --import "$out/report.ncu-rep" --csv --print-units base --print-kernel-base demangled > "$out/ncu.csv"

# The manifest: launch i of LAUNCHES is the i-th profiled kernel (ncu's ID), since the filter
# above profiles exactly the stencil launches, in order.
{
  echo "# Written by validation/measure.sh on $(date -u +%Y-%m-%dT%H:%MZ) from $(basename "$launches")."
  grep '^# device' "$out/run.log" | sed 's/^# /# /' || true
  echo "# $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader -i 0)"
  echo "# $(ncu --version | tail -1)"
  awk '
    /^[ \t]*#/ || NF < 7 { next }
    {
      k = $1; nx = $2; ny = $3; nz = $4; bx = $5; by = $6; bz = $7; cz = (NF >= 8) ? $8 : 1
      fn = k; trace = k
      if (k == "star1") fn = "star<1>"
      if (k == "star4") fn = "star<4>"
      if (k == "star1_zloop") trace = "star1-zloop"
      gz = (k == "star1_zloop") ? int((nz + cz - 1) / cz) : int((nz + bz - 1) / bz)
      printf "\n[[launch]]\nid = %d\nfunction = \"%s\"\nblock = [%d, %d, %d]\ngrid = [%d, %d, %d]\n", n, fn, bx, by, bz, int((nx + bx - 1) / bx), int((ny + by - 1) / by), gz
      printf "trace = \"%s\"\ndomain = [%d, %d, %d]\n", trace, nx, ny, nz
      if (k == "star1_zloop") printf "set = { cz = %d }\n", cz
      n++
    }' n=0 "$launches"
} > "$out/manifest.toml"
echo "wrote $out/ncu.csv and $out/manifest.toml ($(grep -c '^\[\[launch' "$out/manifest.toml") launches)"
fi

if [ "${PROBES:-0}" = 1 ]; then
  nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$out/sched" "$here/sched.cu"
  (cd "$out" && OUT="$out" ./sched > sched.log)
  ncu --metrics dram__sectors_read.sum,dram__sectors_write.sum,lts__t_sectors_srcunit_tex_op_write.sum \
      --kernel-name sparse_store --export "$out/probes" --force-overwrite "$out/sched" > "$out/probes.log" 2>&1
  ncu --import "$out/probes.ncu-rep" --csv --print-units base > "$out/probes.csv"
  nvcc -O3 -std=c++17 -arch="sm_$cc" -o "$out/stream" "$here/stream.cu"
  ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
      --export "$out/stream" --force-overwrite "$out/stream" > "$out/stream.log" 2>&1
  ncu --import "$out/stream.ncu-rep" --csv --print-units base > "$out/stream.csv"
fi
if [ "${MICRO:-0}" = 1 ]; then
  "$here/micro.sh" "$out"
fi
