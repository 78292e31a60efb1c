#!/usr/bin/env python3
"""Summarises `l2_capacity timed` (validation/l2_capacity_skew.sh): per launch, when the warps of
the one wave start each pass and end, as fractions of the launch's span (first stamp to last),
deciles over the warps; and the re-read misses ncu measured for the launch, as in l2_capacity.csv.

    python3 validation/l2_capacity_skew.py DIR   (DIR holds l2_capacity_timed_runs.csv,
                                                   l2_capacity_stamps.csv.gz, l2_capacity_timed_ncu.csv)
"""
import csv
import gzip
import sys
from collections import defaultdict


def deciles(values):
    v = sorted(values)
    return [v[min(len(v) - 1, int(len(v) * k / 10))] for k in range(1, 10)]


def main(d):
    runs = list(csv.DictReader(open(f"{d}/l2_capacity_timed_runs.csv")))
    ncu = defaultdict(dict)
    for r in csv.DictReader(open(f"{d}/l2_capacity_timed_ncu.csv")):
        ncu[int(r["ID"])][r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    stamps = defaultdict(list)
    with gzip.open(f"{d}/l2_capacity_stamps.csv.gz", "rt") as f:
        for r in csv.DictReader(f):
            stamps[int(r["launch"])].append([int(r[f"t{p}"]) for p in range(5)])
    print("rot,m,reread_misses,span_us,quantity,d10,d20,d30,d40,d50,d60,d70,d80,d90")
    for i, run in enumerate(runs):
        per_pass = float(run["sectors_per_pass"])
        passes = int(run["passes"])
        dram = ncu[sorted(ncu)[i]]["dram__sectors_read.sum"]
        reread = (dram - per_pass) / ((passes - 1) * per_pass)
        ws = stamps[i]
        span = max(w[4] for w in ws) - min(w[0] for w in ws)
        for p in range(1, 5):
            q = "end" if p == 4 else f"pass{p}"
            dec = deciles([w[p] / span for w in ws])
            print(f"{run['rot']},{run['m']},{reread:.3f},{span / 1000:.1f},{q}," + ",".join(f"{x:.3f}" for x in dec))


if __name__ == "__main__":
    main(sys.argv[1])
