#!/bin/bash
# SASS and load runs of Ernst et al.'s pystencils stars (pystencils_star.cu), compiled as pystencils
# compiled them (pycuda: nvcc -w -std=c++11 -use_fast_math, the device's arch), for the V100
# (sm_70) where the nvcc at hand still targets it, else for sm_75 (Turing, Volta's successor with
# its instruction set), and for sm_90 beside it. The V100 binaries used 32 registers (31 for the
# 13-point fold 4: the `registers` column of the peer data), so sm_75 is also compiled with
# -maxrregcount=32 and the launch bounds taken out ("sm75r32": -maxrregcount yields to launch
# bounds, and a Turing SM, 1024 threads, cannot be asked for two blocks of 1024 as a V100 can).
# Writes $OUT/pystencils_star_sm*.sass, $OUT/pystencils_star_load_runs.csv and, for sm75r32,
# $OUT/pystencils_star_load_order.csv (each load's run and stencil offset, sass_order.py), which
# traces/ernst-25pt-r4.toml and ernst-13pt-r2.toml follow (tests/load_runs.rs).
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/pystencils_star}
mkdir -p "$OUT"
nvcc --version | tail -2
# compile NAME SOURCE NVCC_ARGS...: $OUT/pystencils_star_NAME.sass and _NAME_registers.txt
# (nothing where nvcc does not target the arch).
compile() {
    local name=$1 source=$2
    shift 2
    if nvcc -w -std=c++11 -use_fast_math -cubin "$@" -o "$OUT/ps.cubin" "$source"; then
        cuobjdump -sass "$OUT/ps.cubin" > "$OUT/pystencils_star_$name.sass"
        cuobjdump -res-usage "$OUT/ps.cubin" | grep -o "Function [a-z0-9_]*\|REG:[0-9]*" | paste - - \
            > "$OUT/pystencils_star_${name}_registers.txt"
    fi
}
for arch in 70 75 90; do
    compile "sm$arch" pystencils_star.cu -arch=sm_$arch
done
sed 's/__launch_bounds__(1024)//' pystencils_star.cu > "$OUT/ps_r32.cu"
compile sm75r32 "$OUT/ps_r32.cu" -arch=sm_75 -maxrregcount=32
rm -f "$OUT/ps.cubin" "$OUT/ps_r32.cu"
echo "arch,function,loads,runs,mean_run" > "$OUT/pystencils_star_load_runs.csv"
for sass in "$OUT"/pystencils_star_sm*.sass; do
    arch=$(basename "$sass" .sass); arch=${arch#pystencils_star_}
    python3 sass_runs.py "$sass" | tail -n +2 | sed "s/^/$arch,/" >> "$OUT/pystencils_star_load_runs.csv"
done
cat "$OUT/pystencils_star_load_runs.csv" "$OUT"/pystencils_star_sm*_registers.txt
echo "function,run,dx,dy,dz" > "$OUT/pystencils_star_load_order.csv"
for f in star3d_r4:640:327680 star3d_r2_fold1:600:360000 star3d_r2_fold2:600:360000 star3d_r2_fold4:600:360000; do
    IFS=: read -r name pitch plane <<< "$f"
    python3 sass_order.py "$OUT/pystencils_star_sm75r32.sass" "$name" "$pitch" "$plane" | tail -n +2 \
        | sed "s/^/$name,/" >> "$OUT/pystencils_star_load_order.csv"
done
