#!/usr/bin/env bash
# Builds validation/atomics_probe.cu and validation/new_kernels.cu for GPU 0's compute capability
# and runs each under ncu with its launches file:
#   validation/new_kernels.sh OUTDIR [ATOMICS_LAUNCHES] [NEW_KERNELS_LAUNCHES]
# (defaults: validation/atomics_launches.txt, validation/new_kernels_launches.txt). Writes
# OUTDIR/atomics_ncu.csv and OUTDIR/new_kernels_ncu.csv (raw --csv --print-units base exports,
# preceded by the programs' own "ID launch" lines), OUTDIR/*_sass.txt (cuobjdump -sass) and
# OUTDIR/*_atomics_ops.txt (the atomic opcodes per function). A metric ncu rejects is dropped and
# named in OUTDIR/dropped_metrics.txt. Data: tests/data/h100/micro/atomics/, tests/data/h100/new_kernels/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: new_kernels.sh OUTDIR [ATOMICS_LAUNCHES] [NEW_KERNELS_LAUNCHES]}
la=${2:-$here/atomics_launches.txt}; ln=${3:-$here/new_kernels_launches.txt}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d '. ')
nvcc -O3 -arch="sm_$cc" -o "$out/atomics_probe" "$here/atomics_probe.cu"
nvcc -O3 -arch="sm_$cc" -o "$out/new_kernels" "$here/new_kernels.cu"
for p in atomics_probe new_kernels; do
  cuobjdump -sass "$out/$p" > "$out/${p}_sass.txt"
  awk '/Function :/ { f = $3; next } {
         for (i = 1; i <= NF; i++) if ($i ~ /^(RED|REDG|ATOMG|ATOM|ATOMS|VOTE|VOTEU|POPC|UPOPC|FLO|UFLO|REDUX|MATCH)(\.|$)/) { print f, $i; break } }' \
    "$out/${p}_sass.txt" | sort | uniq -c > "$out/${p}_atomics_ops.txt"
done
cat "$out"/*_atomics_ops.txt
# plain runs first: every launch must go through without the profiler
"$out/atomics_probe" "$la" > /dev/null; "$out/new_kernels" "$ln" > /dev/null
metrics=dram__sectors_read.sum,dram__sectors_write.sum,gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_requests_srcunit_tex_op_red.sum,lts__t_sectors_srcunit_tex_op_atom.sum,lts__t_requests_srcunit_tex_op_atom.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_srcunit_ltcfabric.sum,smsp__inst_executed_op_global_red.sum,smsp__inst_executed_op_global_atom.sum,sm__cycles_elapsed.avg.per_second
: > "$out/dropped_metrics.txt"
profile() {  # profile CSV EXE LAUNCHES [ncu filter args]: drops metrics ncu names in an error and retries
  local csv=$1 exe=$2 launches=$3; shift 3
  for try in 1 2 3 4 5 6; do
    if ncu --metrics "$metrics" --cache-control all --clock-control base --csv --print-units base "$@" \
         "$exe" "$launches" > "$csv" 2> "$csv.err" && ! grep -q '==ERROR==' "$csv" "$csv.err"; then return 0; fi
    local keep="" bad=""
    for m in ${metrics//,/ }; do
      if grep -h '==ERROR==' "$csv" "$csv.err" | grep -qE -- "(^|[^a-z0-9_])${m%%.*}([^a-z0-9_]|$)"; then bad="$bad $m"; else keep="$keep,$m"; fi
    done
    if [ -z "$bad" ]; then echo "ncu failed on $exe:"; cat "$csv.err"; grep '==ERROR==' "$csv" || true; return 1; fi
    echo "ncu rejected:$bad (dropped)" | tee -a "$out/dropped_metrics.txt"; metrics=${keep#,}
  done
  return 1
}
profile "$out/atomics_ncu.csv" "$out/atomics_probe" "$la"
profile "$out/new_kernels_ncu.csv" "$out/new_kernels" "$ln" -k 'regex:^(jacobi2d|transpose_naive|transpose_tiled|star7_coarse_yz|histogram)'
echo "metrics: $metrics" > "$out/metrics_used.txt"
