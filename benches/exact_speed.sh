#!/usr/bin/env bash
# Times an exact simulation with two gputraffic binaries, alternating them round by round on the
# same machine, so that both see the same load (issue 54, item 3: exact star4 640x512x512 on two
# cores, the binary of faf1490 against a newer one).
#
# Usage: benches/exact_speed.sh OLD_BINARY NEW_BINARY
# Environment (all optional): ROUNDS (5), THREADS (2), KERNEL (star4), DOMAIN (640x512x512),
# BLOCK (32x8x4), HW (h200), CPUS (a taskset CPU list, e.g. 0,1: pins both runs to those cores).
# Prints one line per run (wall, CPU = user + system, peak memory), then each binary's median and
# least wall and CPU time and the ratios old / new. Speed is compared here, never asserted in a
# test; the outputs are compared by scripts/compare-outputs.sh.
set -euo pipefail

if [[ $# -ne 2 || ! -x $1 || ! -x $2 ]]; then
    echo "usage: $0 OLD_BINARY NEW_BINARY (two gputraffic executables)" >&2
    exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
rounds=${ROUNDS:-5}
threads=${THREADS:-2}
kernel=${KERNEL:-star4}
domain=${DOMAIN:-640x512x512}
block=${BLOCK:-32x8x4}
hw=${HW:-h200}
pin=()
if [[ -n ${CPUS:-} ]]; then
    pin=(taskset -c "$CPUS")
fi
if [[ ! -x /usr/bin/time ]]; then
    echo "$0: needs /usr/bin/time (GNU time) for CPU time and peak memory" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "exact $kernel $domain, block $block, $hw, --threads $threads${CPUS:+, cores $CPUS}, $rounds rounds"
echo "machine: $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-4s %9s %9s %9s\n' round bin wall_s cpu_s peak_MB
for round in $(seq 1 "$rounds"); do
    for side in old new; do
        bin=$old
        [[ $side == new ]] && bin=$new
        "${pin[@]}" /usr/bin/time -f '%e %U %S %M' -o "$work/time" \
            "$bin" simulate --kernel "$kernel" --domain "$domain" --block "$block" --hw "$hw" \
            --threads "$threads" --format json >"$work/out.json" 2>"$work/err" || {
            echo "$side binary failed:" >&2
            cat "$work/err" >&2
            exit 1
        }
        read -r wall user sys kb <"$work/time"
        cpu=$(echo "$user + $sys" | bc)
        printf '%-5s %-4s %9.2f %9.2f %9.0f\n' "$round" "$side" "$wall" "$cpu" "$((kb / 1024))"
        echo "$wall $cpu" >>"$work/$side.times"
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# Median and least of column $2 of file $1.
stats() {
    sort -n -k "$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.2f %.2f", m, v[1] }'
}
read -r old_wall old_wall_min <<<"$(stats "$work/old.times" 1)"
read -r new_wall new_wall_min <<<"$(stats "$work/new.times" 1)"
read -r old_cpu old_cpu_min <<<"$(stats "$work/old.times" 2)"
read -r new_cpu new_cpu_min <<<"$(stats "$work/new.times" 2)"
echo "old: wall median $old_wall s (least $old_wall_min), CPU median $old_cpu s (least $old_cpu_min)"
echo "new: wall median $new_wall s (least $new_wall_min), CPU median $new_cpu s (least $new_cpu_min)"
echo "old / new: wall $(echo "scale=2; $old_wall / $new_wall" | bc)x (medians)," \
    "CPU $(echo "scale=2; $old_cpu / $new_cpu" | bc)x (medians)"
