#!/usr/bin/env python3
"""Summary of warp timelines (validation/warp_timeline.cu): per launch, when the warps of a block
start and end, as fractions of the block's life (first warp start to last warp end), deciles over
the logged warps of blocks in the middle of the run:

    python3 validation/warp_timeline_summary.py tests/data/h100/micro/warp_timeline.csv.gz
"""
import collections
import csv
import gzip
import statistics
import sys

LAUNCHES = ["star4 1x16x64", "star4 2x512x1", "star4 8x8x4", "star4 32x8x4", "star4 16x16x4",
            "star4 256x1x1", "star1 1x16x64", "star4 4x16x16"]


def main(path):
    blocks = collections.defaultdict(list)
    for r in csv.DictReader(gzip.open(path, "rt")):
        if int(r["t_end"]) > 0:  # warps outside the guard return before their second clock
            blocks[(int(r["launch"]), int(r["block"]))].append((int(r["t_start"]), int(r["t_end"])))
    print("launch,blocks,block_cycles_median,quantity,d10,d20,d30,d40,d50,d60,d70,d80,d90")
    for launch, name in enumerate(LAUNCHES):
        start, end, life = [], [], []
        for (l, _), warps in blocks.items():
            if l != launch:
                continue
            b0 = min(s for s, _ in warps)
            span = max(e for _, e in warps) - b0
            life.append(span)
            start += [(s - b0) / span for s, _ in warps]
            end += [(e - b0) / span for _, e in warps]
        if not life:
            continue
        for what, xs in (("warp_start", start), ("warp_end", end)):
            deciles = ",".join("%.2f" % q for q in statistics.quantiles(xs, n=10))
            print("%s,%d,%d,%s,%s" % (name, len(life), statistics.median(life), what, deciles))


if __name__ == "__main__":
    main(sys.argv[1])
