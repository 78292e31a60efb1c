#!/usr/bin/env bash
# Accuracy, honesty and speed of `--sample` against exact simulation (examples/sample_study.rs):
# per launch the waves in detail, both wall times, the errors of the L1 misses, L2 reads and DRAM
# reads and writes, and how many counters hold the exact value inside their 95% interval; then
# per budget the medians, largest errors, share inside and summed times.
#
#   benches/sample_study.sh [--threads N] [--budget P[,P...]] [--join off|on|off,on] [--chunk T[,T...]] [--only SUBSTRING] [HW:FILE ...]
#
# Without lists: the long launches of validation/launches-sampling.txt on the h200 and the
# h100-sxm, and the H200 dev set (validation/launches.txt; its 256³ launches are too short to
# sample and are only listed). Each launch is also simulated exactly: hours on two cores, minutes
# on the 16-core GPU host.
set -euo pipefail
cd "$(dirname "$0")/.."
args=() lists=()
while (($#)); do
  case "$1" in
    --threads|--budget|--join|--chunk|--only) args+=("$1" "$2"); shift 2 ;;
    *) lists+=("$1"); shift ;;
  esac
done
if ((${#lists[@]} == 0)); then
  lists=(h200:validation/launches-sampling.txt h100-sxm:validation/launches-sampling.txt h200:validation/launches.txt)
fi
cargo build --release --example sample_study >&2
exec target/release/examples/sample_study "${args[@]}" "${lists[@]}"
