#!/usr/bin/env python3
"""Summary of validation/issue_order.cu's clock log: per (loads per warp, warps per block, warm),
the median cycles a warp takes to issue its run of loads (t1 - t0), and how often the issue
windows of two warps of one scheduler (same SM, %warpid mod 4) that start one after the other
overlap.

    python3 validation/issue_order_summary.py tests/data/h100/micro/issue_order.csv.gz
"""
import collections
import csv
import gzip
import statistics
import sys

rows = list(csv.DictReader(gzip.open(sys.argv[1], "rt")))
groups = collections.defaultdict(list)
for r in rows:
    groups[(int(r["loads"]), int(r["warps"]), int(r["warm"]))].append(r)
print("| loads per warp | warps per block | data | issue cycles, median (p10-p90) | overlapping windows |")
print("|---:|---:|---|---:|---:|")
for (loads, warps, warm), rs in sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
    issue = sorted(int(r["t1"]) - int(r["t0"]) for r in rs)
    per_scheduler = collections.defaultdict(list)
    for r in rs:
        per_scheduler[(r["sm"], int(r["hw_warp"]) % 4)].append((int(r["t0"]), int(r["t1"])))
    overlaps = []
    for windows in per_scheduler.values():
        windows.sort()
        overlaps += [b[0] < a[1] for a, b in zip(windows, windows[1:])]
    share = sum(overlaps) / len(overlaps) if overlaps else 0.0
    print(f"| {loads} | {warps} | {'L1 hits' if warm else 'from L2'} | {statistics.median(issue):.0f} "
          f"({issue[len(issue) // 10]}-{issue[9 * len(issue) // 10]}) | {share:.0%} |")
