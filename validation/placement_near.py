#!/usr/bin/env python3
"""How often a block runs on the SM of a block 1-7 ids before it, after the first wave, in block
placement logs of validation/sched.cu (columns block, sm, ...): the mean over the 7 distances. A
2-wide block shares each 128-byte line with its 7 neighbours in x, so this is how often a
neighbour's lines can be in its L1. Chance: 1 in the number of SMs.

    python3 validation/placement_near.py SLOTS_PER_SM LOG.csv.gz ...
"""
import csv
import gzip
import sys


def main(slots, paths):
    print("log,slots,blocks,near_1_7")
    for path in paths:
        with gzip.open(path, "rt") as f:
            sm = [int(r["sm"]) for r in csv.DictReader(f)]
        first = slots * len(set(sm))
        shares = [
            sum(sm[j] == sm[j + d] for j in range(first, len(sm) - d)) / (len(sm) - d - first)
            for d in range(1, 8)
        ]
        print(f"{path.split('/')[-1]},{slots},{len(sm)},{sum(shares) / 7:.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])
