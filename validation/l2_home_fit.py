#!/usr/bin/env python3
"""Which address bits pick a line's L2 home partition, read off the near/far measurement.

    validation/l2_home_fit.py tests/data/h200/micro tests/data/h100/micro

For every configuration of `l2_near_far.csv.gz` (validation/l2_near_far.cu) whose warmer sits in
the other partition than the measurer, a line is "far" when its pass-0 latency exceeds its pass-1
latency by more than 70 cycles (the rule of `l2_near_far --map`): it is homed on the warmer's side.
The home is taken to be the XOR parity of some address bits. Offsets are relative to a cudaMalloc
buffer on 2 MiB pages, so bits 0..20 of an offset are those of the physical address, and the bits
above give one unknown constant per 2 MiB page (the physical frame). Solving over GF(2) for the
bits 7..20 in the parity and one constant per page: the system has full rank, and a linear
function that fits every line is the measured one (a wrong set of bits fits about half).

Writes `l2_home_lines.csv` (config, line_offset_bytes, far) beside each input, which
tests/l2_home_hash.rs checks the configs' `l2.home_hash` against, and prints the fit.
"""
import collections
import csv
import gzip
import os
import sys

LOW, HIGH = 7, 21  # candidate bits 7..20: within a 128 B line nothing is homed apart; 21+ is the page
PAGE_SHIFT = 21


def far_lines(path):
    """{config: {offset: far}} for configurations whose warmer left about half the lines far."""
    lat = collections.defaultdict(lambda: collections.defaultdict(dict))
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r["warm_sm"] == "-1":
                continue
            lat[r["config"]][int(r["line_offset_bytes"])][int(r["pass"])] = int(r["cycles"])
    out = {}
    for config, lines in lat.items():
        far = {o: int(p[0] > p[1] + 70) for o, p in lines.items()}
        if 0.3 < sum(far.values()) / len(far) < 0.7:
            out[config] = far
    return out


def solve(far):
    """GF(2) elimination; returns (bits in the parity, lines the linear fit gets wrong)."""
    pages = sorted({o >> PAGE_SHIFT for o in far})
    nbits = HIGH - LOW
    pivots = {}
    wrong = 0
    for o, y in far.items():
        v = ((o >> LOW) & ((1 << nbits) - 1)) | 1 << (nbits + pages.index(o >> PAGE_SHIFT))
        for p in sorted(pivots, reverse=True):
            if v >> p & 1:
                v ^= pivots[p][0]
                y ^= pivots[p][1]
        if v == 0:
            wrong += y  # an equation the others contradict
        else:
            pivots[v.bit_length() - 1] = (v, y)
    value = {}
    for p in sorted(pivots):
        v, y = pivots[p]
        for q in range(p):
            if v >> q & 1:
                y ^= value.get(q, 0)
        value[p] = y
    rank_ok = all(i in pivots for i in range(nbits))
    bits = [LOW + i for i in range(nbits) if value.get(i, 0)]
    return bits, wrong, rank_ok


def main(dirs):
    for d in dirs:
        configs = far_lines(os.path.join(d, "l2_near_far.csv.gz"))
        with open(os.path.join(d, "l2_home_lines.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["config", "line_offset_bytes", "far"])
            for config in sorted(configs):
                for o in sorted(configs[config]):
                    w.writerow([config, o, configs[config][o]])
        for config in sorted(configs):
            bits, wrong, rank_ok = solve(configs[config])
            far = configs[config]
            print(f"{d} {config}: {len(far)} lines, far {sum(far.values()) / len(far):.3f}; "
                  f"parity of bits {bits} (of {LOW}..{HIGH - 1}) and a constant per 2 MiB page; "
                  f"lines contradicting it: {wrong}; bits determined: {rank_ok}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["tests/data/h200/micro", "tests/data/h100/micro"])
