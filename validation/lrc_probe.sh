#!/usr/bin/env bash
# Builds and profiles validation/lrc_probe.cu on GPU 0 (caches flushed, base clocks), with every
# L2 Request Coalescer counter the chip has, and the same counters on a few stencil launches:
#   validation/lrc_probe.sh OUTDIR [STENCIL_LAUNCHES]
# Writes OUTDIR/lrc_metrics.txt (ncu's list of lrc__ metrics), lrc_probe.csv (the probe's launches
# joined with their counters by micro_join.py), lrc_probe_runs.csv, lrc_probe_ncu.csv, and with
# STENCIL_LAUNCHES (a validation/launches.txt-style file) lrc_stencils_ncu.csv and
# lrc_stencils_manifest.toml (what `gputraffic validate` reads).
# SM 124's partners: 125 (same TPC), and one SM of its GPC and one of another GPC, found first
# (the GPC map is a card's: validation/l2_gpc_map.py). Then groups of 2-16 SMs of the configs' first
# GPC (124, 126, 128, ...: one GPC only on cards with that map) and all 132 SMs read together.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: lrc_probe.sh OUTDIR [STENCIL_LAUNCHES]}
stencil_launches=${2:+$(cd "$(dirname "$2")" && pwd)/$(basename "$2")}
mkdir -p "$out"; out=$(cd "$out" && pwd); cd "$out"
nvcc -O3 -arch=sm_90 -o lrc_probe "$here/lrc_probe.cu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > device.txt
ncu --query-metrics --chip gh100 > all_metrics.txt 2>&1 || true
grep -o '^lrc__[A-Za-z0-9_]*' all_metrics.txt | sort -u > lrc_metrics.txt || true
lrc=$(sed 's/$/.sum/' lrc_metrics.txt | paste -sd, -)
base=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum
base=$base,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum
base=$base,dram__sectors_read.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second

# Partners of SM 124: the L2 sees one reader's sectors (< 1.25x) when the two merge.
for p in 126 127 0 1 2 3 16 17 8 10; do echo "full 1024 0 124 $p"; done > find.txt
ncu --metrics lts__t_sectors_srcunit_tex_op_read.sum --cache-control all --clock-control base \
  -k regex:probe -f -o find --log-file find.log ./lrc_probe find.txt > find_runs.csv
ncu --import find.ncu-rep --csv --print-units base > find_ncu.csv
read -r same other < <(python3 - <<'EOF'
import csv
runs = [r for r in csv.DictReader(open("find_runs.csv"))]
vals = {}
for r in csv.DictReader(l for l in open("find_ncu.csv") if l.startswith('"')):
    vals[int(r["ID"])] = float(r["Metric Value"].replace(",", ""))
same = other = None
for r in runs:
    ratio = vals[int(r["id"])] / 32768
    if int(r["found"]) != 2:
        continue
    if ratio < 1.25 and same is None:
        same = r["sm_b"]
    if ratio > 1.75 and other is None:
        other = r["sm_b"]
print(same or 126, other or 2)
EOF
)
echo "# SM 124 with $same (same GPC) and $other (another GPC)" > partners.txt

{
  echo "solo 1024 0 124 124"
  echo "full 1024 0 124 125"
  echo "full 1024 0 124 $other"
  for rep in 1 2; do
    for o in 0 1 2 4 8 16 32 64 128 256 1024 4096; do echo "full 1024 $o 124 $same"; done
  done
  for o in 0 4 16 64 256; do echo "sector 1024 $o 124 $same"; done
  for o in 0 16; do echo "sector 32 $o 124 $same"; done
  for o in 0 4 16 64; do echo "full 32 $o 124 $same"; done
  for o in 0 16 64; do echo "full 256 $o 124 $same"; done
  echo "mixed 1024 0 124 $same"
  echo "sector 1024 0 124 $other"
  # G SMs of one GPC (the measured map's first GPC) together, and all SMs: how many requests in
  # flight the coalescer can match.
  gpc=(124 126 128 130 125 127 129 131 0 16 32 48 1 17 33 49)
  for g in 2 4 8 16; do
    list=$(IFS=,; echo "${gpc[*]:0:$g}")
    for m in full sector; do for t in 1024 256; do echo "$m $t 0 $list -"; done; done
  done
  all=$(seq -s, 0 131) # the 132 SMs of an H100 SXM or H200
  for m in full sector; do echo "$m 1024 0 $all -"; done
} > launches.txt
ncu --metrics "$base${lrc:+,$lrc}" --cache-control all --clock-control base -k regex:probe -f \
  -o probe --log-file lrc_probe_ncu.log ./lrc_probe launches.txt > lrc_probe_runs.csv
ncu --import probe.ncu-rep --csv --print-units base > lrc_probe_ncu.csv
python3 "$here/micro_join.py" launch lrc_probe.csv lrc_probe_runs.csv lrc_probe_ncu.csv

if [ -n "$stencil_launches" ]; then
  EXTRA_METRICS=$lrc "$here/measure.sh" "$out/stencils" "$stencil_launches"
  cp stencils/ncu.csv lrc_stencils_ncu.csv
  cp stencils/manifest.toml lrc_stencils_manifest.toml
fi
rm -rf lrc_probe stencils ./*.ncu-rep
