#!/usr/bin/env bash
# rank's cost for 8, 42 and 126 shapes, default (the race) and --exact, in CPU seconds (user +
# system; the machine is shared, so wall times are noisy) with wall time and peak memory, and
# whether the two modes put the same shape first (else the gap between the exact times of the
# default's first and --exact's first). Next to them, one exact `simulate` of 32x8x4 on the same
# launch, the issue's yardstick (docs/performance.md, "rank: screen, then confirm").
#
#   benches/rank_sizes.sh [KERNEL [HW [DOMAIN]]]      (default: star4 h200 256x256x256)
#   BIN=path/to/gputraffic benches/rank_sizes.sh ...  (a built binary: no cargo build; e.g. on a GPU host)
#
# The sets: eight shapes near the best (a code generator's short list), all-256 (42) and
# all-128,all-256,all-512 (126). --exact of 126 shapes of star4 256^3 takes some minutes of CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
kernel=${1:-star4} hw=${2:-h200} domain=${3:-256x256x256}
if [[ -n ${BIN:-} ]]; then
  bin=$BIN
else
  cargo build --release >&2
  bin=target/release/gputraffic
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# CPU seconds, wall seconds and peak MB of one command; its stdout to $tmp/out.
measure() {
  /usr/bin/time -f '%U %S %e %M' -o "$tmp/time" "$@" > "$tmp/out" 2> /dev/null
  awk '{printf "%.1f %.1f %.0f\n", $1 + $2, $3, $4 / 1024}' "$tmp/time"
}
launch=(--kernel "$kernel" --hw "$hw" --domain "$domain")
read -r cpu wall mb < <(measure "$bin" simulate "${launch[@]}" --block 32x8x4)
echo "machine: $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$kernel $hw $domain: one exact simulate of 32x8x4: $cpu s CPU, $wall s wall, $mb MB"
printf '%-8s %6s | %9s %9s %7s | %9s %9s %7s | %-10s %-10s %7s\n' set shapes \
  "default" "wall" "MB" "--exact" "wall" "MB" "exact 1st" "default 1st" "gap %"
sets=(
  "32x8x1,32x4x2,32x2x4,64x4x1,64x2x2,16x4x4,16x8x2,8x8x4"
  "all-256"
  "all-128,all-256,all-512"
)
names=(short all-256 126)
for i in "${!sets[@]}"; do
  read -r dcpu dwall dmb < <(measure "$bin" rank "${launch[@]}" --blocks "${sets[$i]}" --format csv)
  cp "$tmp/out" "$tmp/default.csv"
  read -r ecpu ewall emb < <(measure "$bin" rank "${launch[@]}" --blocks "${sets[$i]}" --format csv --exact)
  cp "$tmp/out" "$tmp/exact.csv"
  # CSV: rank,block_x,block_y,block_z,simulated,predicted_s,...
  shapes=$(($(wc -l < "$tmp/exact.csv") - 1))
  first() { awk -F, 'NR == 2 {print $2 "x" $3 "x" $4}' "$1"; }
  exact_first=$(first "$tmp/exact.csv")
  default_first=$(first "$tmp/default.csv")
  gap=$(awk -F, -v b="$default_first" 'NR == 2 {best = $6} NR > 1 && $2 "x" $3 "x" $4 == b {t = $6}
    END {printf "%.3f", (t / best - 1) * 100}' "$tmp/exact.csv")
  printf '%-8s %6s | %7s s %7s s %7s | %7s s %7s s %7s | %-10s %-10s %7s\n' "${names[$i]}" "$shapes" \
    "$dcpu" "$dwall" "$dmb" "$ecpu" "$ewall" "$emb" "$exact_first" "$default_first" "$gap"
done
