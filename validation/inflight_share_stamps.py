#!/usr/bin/env python3
"""Which blocks of an SM fall behind when its warps compete for issue: the stamped launches of
validation/inflight_share.cu (tests/data/h100/inflight_share_stamps/: run.log, one ID.csv.gz a
launch with each warp's block, SM and %globaltimer at its start, at line 2048 and at its end).
Per launch: the warps an SM started together (within 2 us of its first), their median life, the
spread of their halfway stamps within an SM, and the median halfway stamp (us after the SM's
first start) of the blocks in each eighth by age, oldest first. Standard library only.

    python3 validation/inflight_share_stamps.py [DIR]
"""
import collections
import csv
import gzip
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOGETHER_NS = 2000  # blocks that start within this of an SM's first start are its first wave


def main(d):
    launches = [line.split("|")[0].split(" ", 1)[1].strip() for line in open(os.path.join(d, "run.log"))]
    print("launch | warps an SM started together | life us | halfway spread in an SM us (median, max)"
          " | halfway us by age eighth, oldest first")
    for i, text in enumerate(launches):
        by_sm = collections.defaultdict(list)
        with gzip.open(os.path.join(d, f"{i}.csv.gz"), "rt") as f:
            for r in csv.DictReader(f):
                by_sm[int(r["sm"])].append((int(r["start"]), int(r["half"]), int(r["end"]), int(r["block"])))
        together, lives, spreads = [], [], []
        by_eighth = collections.defaultdict(list)
        for warps in by_sm.values():
            t0 = min(w[0] for w in warps)
            first = [w for w in warps if w[0] - t0 < TOGETHER_NS]
            starts = {}
            for w in first:
                starts[w[3]] = min(starts.get(w[3], w[0]), w[0])
            age = {b: k for k, b in enumerate(sorted(starts, key=lambda b: (starts[b], b)))}
            halves = [w[1] - t0 for w in first]
            together.append(len(first))
            spreads.append((max(halves) - min(halves)) / 1e3)
            lives.append(statistics.median((w[2] - w[0]) / 1e3 for w in first))
            for w in first:
                by_eighth[age[w[3]] * 8 // len(age)].append((w[1] - t0) / 1e3)
        eighths = " ".join(f"{statistics.median(v):.0f}" for _, v in sorted(by_eighth.items()))
        print(f"{text} | {statistics.median(together):.0f} | {statistics.median(lives):.0f}"
              f" | {statistics.median(spreads):.0f}, {max(spreads):.0f} | {eighths}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "data", "h100", "inflight_share_stamps"))
