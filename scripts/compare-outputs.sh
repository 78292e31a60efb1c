#!/usr/bin/env bash
# Runs two gputraffic binaries on the same set of simulations and compares their outputs byte for
# byte: every shipped trace (traces/*.toml) on the h200 and a100-40gb configs in JSON and CSV,
# exact and --sample, at a small domain where the default is large; a few launches long enough
# for --sample to sample; and every trace on variants of h200.toml whose L1 or L2 uses each
# replacement policy (and the split L2's local_ways limit, and LRU over a way count that is not a
# power of two), so that a change to the caches shows in some output.
#
# Usage: scripts/compare-outputs.sh BEFORE_BIN AFTER_BIN
# Prints the number of identical and different outputs and the first lines of each difference;
# exits 1 on any difference (or when a run fails differently), 2 on bad usage.
set -euo pipefail

if [[ $# -ne 2 || ! -x $1 || ! -x $2 ]]; then
    echo "usage: $0 BEFORE_BIN AFTER_BIN (two gputraffic executables)" >&2
    exit 2
fi
before=$(realpath "$1")
after=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The arguments that make trace $1 small: the 3-D stencils at 64^3 and the 2-D kernels at
# 512^2 (as tests/models_every_trace.rs picks), and the kernels with their own size parameter
# shrunk but still past the L2 where they are meant to be.
small_args() {
    local file="traces/$1.toml"
    local has_nx has_ny has_nz
    has_nx=$(grep -cE '^nx *=' "$file" || true)
    has_ny=$(grep -cE '^ny *=' "$file" || true)
    has_nz=$(grep -cE '^nz *=' "$file" || true)
    if [[ $has_nx -gt 0 && $has_ny -gt 0 && $has_nz -gt 0 ]]; then
        echo "--domain 64x64x64"
    elif [[ $has_nx -gt 0 && $has_ny -gt 0 ]]; then
        echo "--domain 512x512"
    else
        case $1 in
        histogram) echo "--set n=1048576" ;;
        partial-store) echo "--set buffer_bytes=134217728" ;;
        l2-sweep) echo "--set passes=2" ;;
        *) echo "" ;;
        esac
    fi
}

# h200.toml with line $1 (which must be there, once) replaced by $2, written to $3.
variant() {
    local from=$1 to=$2 out=$3
    if [[ $(grep -cF -- "$from" "$work/base.toml") -ne 1 ]]; then
        echo "compare-outputs.sh: hw-configs/h200.toml no longer has the line '$from' once" >&2
        exit 2
    fi
    awk -v from="$from" -v to="$to" 'index($0, from) == 1 { print to; next } { print }' \
        "$work/base.toml" >"$out"
}

# Every policy the config enum names (`Replacement` in src/input/hw.rs; serde takes its
# variants' names in lowercase), so that a new policy is compared without editing this script.
policies=$(awk '/^pub enum Replacement \{/ { inside = 1; next }
    inside && /^\}/ { exit }
    inside && /^    [A-Z][A-Za-z]*,$/ { sub(/^ +/, ""); sub(/,$/, ""); print tolower($0) }' src/input/hw.rs)
if [[ $(echo "$policies" | wc -w) -lt 2 ]]; then
    echo "compare-outputs.sh: no replacement policies found in src/input/hw.rs" >&2
    exit 2
fi

mkdir -p "$work/hw"
cp hw-configs/h200.toml "$work/base.toml"
l1_line='replacement = "plru"              # 66-77'
l2_line='replacement = "lru"               # [ways]'
l2_ways='ways = 16                         # [ways]'
l1_indexing='set_indexing = "xor-fold"'
# The shipped h200 has a tree-PLRU L1 and an LRU L2.
for p in $policies; do
    if [[ $p != plru ]]; then
        variant "$l1_line" "replacement = \"$p\"" "$work/hw/l1-$p.toml"
    fi
    if [[ $p != lru ]]; then
        variant "$l2_line" "replacement = \"$p\"" "$work/hw/l2-$p.toml"
    fi
done
# The near-line limit is allowed under these two (Replacement::allows_local_ways).
for p in lru plru; do
    variant "$l2_line" "replacement = \"$p\"
local_ways = 11" "$work/hw/l2-$p-local-ways.toml"
done
# 12 ways, not a power of two: LRU by stamps (tree-PLRU refuses it).
for p in $policies; do
    if [[ $p == plru ]]; then
        continue
    fi
    variant "$l2_ways" "ways = 12" "$work/twelve.toml"
    cp "$work/base.toml" "$work/base.bak"
    cp "$work/twelve.toml" "$work/base.toml"
    variant "$l2_line" "replacement = \"$p\"" "$work/hw/l2-12way-$p.toml"
    cp "$work/base.bak" "$work/base.toml"
done
# The measured L1 index, 512 sets of 4 ways, under each policy: the cache holds fewer lines
# than its ways, so its capacity limit evicts too (Cache::with_capacity_lines).
cp "$work/base.toml" "$work/base.bak"
variant "ways = 16                         # 124 sets" "ways = 4" "$work/l1-4.toml"
cp "$work/l1-4.toml" "$work/base.toml"
variant "$l1_indexing" 'set_indexing = "xor-matrix"' "$work/l1-matrix.toml"
cp "$work/l1-matrix.toml" "$work/base.toml"
for p in $policies; do
    variant "$l1_line" "replacement = \"$p\"" "$work/hw/l1-xor-matrix-$p.toml"
done
cp "$work/base.bak" "$work/base.toml"

# One line per run: a name for it, then the gputraffic arguments.
runs="$work/runs.txt"
: >"$runs"
traces=$(ls traces/*.toml | xargs -n1 basename | sed 's/\.toml$//')
for t in $traces; do
    small=$(small_args "$t")
    for hw in h200 a100-40gb; do
        for format in json csv; do
            echo "$t.$hw.$format simulate --kernel $t --hw $hw $small --format $format" >>"$runs"
            echo "$t.$hw.$format.sample simulate --kernel $t --hw $hw $small --format $format --sample" >>"$runs"
        done
    done
    for cfg in "$work"/hw/*.toml; do
        name=$(basename "$cfg" .toml)
        echo "$t.$name.json simulate --kernel $t --hw $cfg $small --format json" >>"$runs"
    done
done
# Launches long enough that --sample samples (the small ones above are simulated exactly).
for hw in h200 a100-40gb "$work/hw/l1-random.toml" "$work/hw/l2-srrip.toml"; do
    name=$(basename "$hw" .toml)
    echo "ernst-lbm-d3q15.$name.sampled simulate --kernel ernst-lbm-d3q15 --hw $hw --format json --sample" >>"$runs"
done

same=0
different=0
failed=0
while read -r name args; do
    for side in before after; do
        bin=$before
        [[ $side == after ]] && bin=$after
        # shellcheck disable=SC2086 # the arguments are split on purpose
        if "$bin" $args --threads 2 >"$work/$side.out" 2>"$work/$side.err"; then
            echo "exit 0" >>"$work/$side.out"
        else
            echo "exit $?" >>"$work/$side.out"
            cat "$work/$side.err" >>"$work/$side.out"
        fi
    done
    if cmp -s "$work/before.out" "$work/after.out"; then
        same=$((same + 1))
        if ! grep -q '^exit 0$' "$work/before.out"; then
            failed=$((failed + 1))
            echo "failed alike: $name: $(tail -n 1 "$work/before.err")"
        fi
    else
        different=$((different + 1))
        echo "DIFFERENT: $name ($args)"
        diff "$work/before.out" "$work/after.out" | head -n 6 || true
    fi
done <"$runs"

echo "$same identical, $different different outputs ($failed of the identical ones are the same error)"
[[ $different -eq 0 ]]
