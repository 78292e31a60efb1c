#!/usr/bin/env bash
# Times lifted kernels against their hand-written traces (issue 51: "a lifted kernel simulates as
# fast as its hand-written trace"), one thread, the two alternated run by run on the same machine.
# The lifted kernel is read from the PTX fixture in tests/data/ptx/ (lifted in memory, as
# `simulate --kernel FILE.ptx --entry NAME` does), the trace from traces/.
#
# Usage: benches/lifted_speed.sh BINARY
# Environment (all optional): ROUNDS (9), CPUS (a taskset CPU list, e.g. 3: pins every run there).
# Prints per launch the least and median CPU time (user + system) of each and the ratios
# lifted / hand-written. Speed is compared here, never asserted in a test.
set -euo pipefail
set -f # the option lists below hold `*`: no file names

if [[ $# -ne 1 || ! -x $1 ]]; then
    echo "usage: $0 BINARY (a gputraffic executable)" >&2
    exit 2
fi
bin=$(realpath "$1")
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-9}
pin=()
if [[ -n ${CPUS:-} ]]; then
    pin=(taskset -c "$CPUS")
fi
if [[ ! -x /usr/bin/time ]]; then
    echo "$0: needs /usr/bin/time (GNU time) for CPU time" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# trace | PTX fixture and entry | domain | further options for both | further options for the
# lifted kernel (the row pitch and plane the host passes for 256^3 with 4 points of padding a side,
# and for the z-loop what its guard does not tell: the grid, updates and array extents)
launches=(
    "star1-zloop|stencils.ptx star1_zloop|256x256x256|--set cz=16|--set pitch=264 --set plane=69696 --grid cdiv(nx,blockDim.x),cdiv(ny,blockDim.y),cdiv(nz,cz) --updates nx*ny*nz --extent in=(nz+8)*plane --extent out=(nz+8)*plane"
    "star1-zloop|stencils.ptx star1_zloop|256x256x256|--set cz=15|--set pitch=264 --set plane=69696 --grid cdiv(nx,blockDim.x),cdiv(ny,blockDim.y),cdiv(nz,cz) --updates nx*ny*nz --extent in=(nz+8)*plane --extent out=(nz+8)*plane"
    "star1-zloop|stencils.ptx star1_zloop|256x256x256|--set cz=8|--set pitch=264 --set plane=69696 --grid cdiv(nx,blockDim.x),cdiv(ny,blockDim.y),cdiv(nz,cz) --updates nx*ny*nz --extent in=(nz+8)*plane --extent out=(nz+8)*plane"
    "star1|stencils.ptx star<1>|256x256x256||--set pitch=264 --set plane=69696"
    "star4|stencils.ptx star<4>|256x256x256||--set pitch=264 --set plane=69696"
    "copy|stencils.ptx copy|256x256x256||--set pitch=264 --set plane=69696"
    "jacobi2d|new_kernels.ptx jacobi2d|4096x4096||"
)

# CPU seconds of one run: simulate with the given options.
cpu_of() {
    "${pin[@]}" /usr/bin/time -f '%U %S' -o "$work/time" "$bin" simulate "$@" --hw h200 \
        --block 32x8x1 --threads 1 --format json >/dev/null 2>"$work/err" || {
        echo "run failed: simulate $*" >&2
        cat "$work/err" >&2
        exit 1
    }
    read -r user sys <"$work/time"
    echo "$user + $sys" | bc
}

# Median and least of the numbers in file $1.
stats() {
    sort -n "$1" | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.3f %.3f", v[1], m }'
}

echo "lifted against hand-written, 32x8x1 on the h200, one thread${CPUS:+, cores $CPUS}, $rounds rounds"
echo "machine: $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for launch in "${launches[@]}"; do
    IFS='|' read -r trace ptx domain common lifted_only <<<"$launch"
    read -r file entry <<<"$ptx"
    : >"$work/hand"
    : >"$work/lifted"
    for _ in $(seq 1 "$rounds"); do
        # shellcheck disable=SC2086 # the option lists split into words on purpose
        cpu_of --kernel "traces/$trace.toml" --domain "$domain" $common >>"$work/hand"
        # shellcheck disable=SC2086
        cpu_of --kernel "tests/data/ptx/$file" --entry "$entry" --domain "$domain" $common \
            $lifted_only >>"$work/lifted"
    done
    read -r hand_min hand_med <<<"$(stats "$work/hand")"
    read -r lifted_min lifted_med <<<"$(stats "$work/lifted")"
    printf '%-12s %-12s %-11s hand %s / %s s, lifted %s / %s s (least / median), lifted / hand %s / %s\n' \
        "$trace" "$domain" "$common" "$hand_min" "$hand_med" "$lifted_min" "$lifted_med" \
        "$(echo "scale=3; $lifted_min / $hand_min" | bc)" "$(echo "scale=3; $lifted_med / $hand_med" | bc)"
done
