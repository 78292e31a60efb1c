#!/usr/bin/env bash
# Agreement of `rank`'s default (screen, then confirm) with `rank --exact` over the H200 dev set
# and the H100 data: per group of launches (kernel, domain, cz) the exact mode's first shape, the
# default's, the gap between their exact predicted times, the largest screen error, how many
# shapes were confirmed, screened, dropped by their bounds and dropped by their pre-screens, the
# largest pre-screen error, and both wall times; a bound above an exact time, a screen beyond its
# margin, a pre-screen above the exact time beyond its margin or a first shape beyond the 1%
# tolerance is flagged below its group (examples/rank_agreement.rs).
#
#   benches/rank_agreement.sh [--threads N] [--only SUBSTRING] [HW:FILE ...]
#
# Without lists: h200 over validation/launches.txt (its first 77 launches are the H200 dev set,
# tests/data/h200_dev_set.csv; the 12 box27 and star1_zloop launches ride along), and h100-sxm
# over validation/launches.txt and validation/launches-timing.txt (tests/data/h100). The full
# set takes hours on two cores; --only picks groups whose "hw kernel domain set" contains a
# substring (e.g. --only "h200 star1 ").
set -euo pipefail
cd "$(dirname "$0")/.."
args=() lists=()
while (($#)); do
  case "$1" in
    --threads|--only) args+=("$1" "$2"); shift 2 ;;
    *) lists+=("$1"); shift ;;
  esac
done
if ((${#lists[@]} == 0)); then
  lists=(h200:validation/launches.txt h100-sxm:validation/launches.txt h100-sxm:validation/launches-timing.txt)
fi
cargo build --release --example rank_agreement >&2
exec target/release/examples/rank_agreement "${args[@]}" "${lists[@]}"
