#!/usr/bin/env python3
"""How much longer a read served by the far L2 partition takes than a near hit, per configuration of
validation/l2_near_far.cu whose warmer sits on the other side of the L2: the median pass-0 latency
of the lines homed on the warmer's side (far: `l2_home_lines.csv`, written by l2_home_fit.py) less
that of the others (near hits), in cycles and, at the clock Nsight Compute locked the launch to
(`l2_near_far_runs.csv`), in nanoseconds. The configs' `l2.far_read_extra_ns` is the median.

    python3 validation/l2_far_extra.py tests/data/h100/micro > tests/data/h100/micro/l2_far_extra.csv
"""
import csv
import gzip
import statistics
import sys
from collections import defaultdict

d = sys.argv[1]
far_of = {(r["config"], r["line_offset_bytes"]): r["far"] == "1"
          for r in csv.DictReader(open(f"{d}/l2_home_lines.csv"))}
clock = {}
for r in csv.DictReader(open(f"{d}/l2_near_far_runs.csv")):
    clock.setdefault(r["config"], float(r["clock_mhz"]))
cycles = defaultdict(lambda: ([], []))
for r in csv.DictReader(gzip.open(f"{d}/l2_near_far.csv.gz", "rt")):
    key = (r["config"], r["line_offset_bytes"])
    if r["pass"] == "0" and key in far_of:
        cycles[r["config"]][far_of[key]].append(int(r["cycles"]))
print("config,near_lines,far_lines,near_cycles,far_cycles,clock_mhz,extra_ns")
for config in sorted(cycles):
    near, far = cycles[config]
    n, f = statistics.median(near), statistics.median(far)
    mhz = clock[config]
    print(f"{config},{len(near)},{len(far)},{n},{f},{mhz},{(f - n) / mhz * 1e3:.1f}")
