#!/usr/bin/env python3
"""How far two blocks that start together drift apart on the GPU, from block-to-SM logs of
validation/sched.cu (block,sm,start_ns,end_ns; .csv or .csv.gz). Standard library only.

    block_drift.py LOG [LOG ...] > block_drift.csv

Consecutive blocks b, b + 1 that run on different SMs and start within 200 ns of each other (the
dispatcher hands them out together) read the same lines at the same point of their lives; their
lives then differ by how far they fell out of step. Per log, as CSV: the pairs, the median block
life, and the spread of the difference of the two lives as a robust standard deviation (1.4826
times the median absolute difference, so that a few blocks held up by a refresh or a late launch
do not decide it), in nanoseconds and as a share of the median life (`drift`: the quantity
`[schedule] block_drift` of hw-configs/ carries, the median over a GPU's logs).
"""
import csv
import gzip
import statistics
import sys

TOGETHER_NS = 200
MAD_TO_SD = 1.4826


def read_log(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return {int(r["block"]): (int(r["sm"]), int(r["start_ns"]), int(r["end_ns"]))
                for r in csv.DictReader(f)}


def drift(blocks):
    """(pairs, median life, robust sd of the life difference) of a log's blocks."""
    lives, diffs = [], []
    for b in sorted(blocks):
        sm, start, end = blocks[b]
        lives.append(end - start)
        nxt = blocks.get(b + 1)
        if nxt is None:
            continue
        sm1, start1, end1 = nxt
        if sm1 != sm and abs(start1 - start) <= TOGETHER_NS:
            diffs.append((end1 - start1) - (end - start))
    sd = MAD_TO_SD * statistics.median(abs(d) for d in diffs)
    return len(diffs), statistics.median(lives), sd


def main(paths):
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["log", "pairs", "median_life_ns", "life_difference_sd_ns", "drift"])
    for p in paths:
        pairs, life, sd = drift(read_log(p))
        w.writerow([p.split("/")[-1], pairs, f"{life:.0f}", f"{sd:.1f}", f"{sd / life:.4f}"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
