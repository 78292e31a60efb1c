#!/usr/bin/env python3
"""Summarises validation/l2_race_probe.sh: per pair of SMs, line count and delay, the mean over the
repeats of the near-partition misses and what a replay that serves every request at once would
count (one-sector reads miss two sectors, the 64-byte fill): opposite sides 1.5 misses a line (the
first reader's far miss fills the home partition, and a later home read hits), one side 1.
"Raced" is the share of the lines homed on the second reader's side that it missed too.

    python3 validation/l2_race_summary.py tests/data/h200/micro/race
"""
import csv
import sys
from collections import defaultdict

d = sys.argv[1]
runs = list(csv.DictReader(open(f"{d}/race_runs.csv")))
ncu = defaultdict(dict)
for r in csv.DictReader(open(f"{d}/race_ncu.csv")):
    ncu[r["ID"]][r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
groups = defaultdict(list)
for r in runs:
    m = ncu[r["id"]]
    key = (r["sm_a"], r["sm_b"], int(r["lines"]), int(r["delay_ns"]))
    groups[key].append((m["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"], int(r["b_start_ns"])))
print("sm_a,sm_b,lines,delay_ns,b_start_ns,misses,replay_misses,raced")
for (a, b, lines, delay), v in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[0][2], kv[0][3])):
    misses = sum(x[0] for x in v) / len(v)
    start = sum(x[1] for x in v) / len(v)
    opposite = (a, b) != ("0", "1")
    replay = 2 * lines * (1.5 if opposite else 1.0)
    raced = (misses - replay) / (2 * lines / 2) if opposite else 0.0
    print(f"{a},{b},{lines},{delay},{start:.0f},{misses:.0f},{replay:.0f},{raced:.2f}")
