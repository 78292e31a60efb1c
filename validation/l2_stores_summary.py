#!/usr/bin/env python3
"""Counts where SM 0 found each line in `l2_near_far --stores` (LINES.csv.gz), per configuration,
repetition and home side, and writes the summary `tests/l2_stores.rs` replays:

    validation/l2_stores_summary.py tests/data/h100/micro/l2_stores.csv.gz > .../l2_stores_summary.csv

A line's home is the side whose read leaves it far from SM 0 (configuration `rd_other`, rep 0:
pass-0 latency more than 70 cycles above pass 1's). Per line, pass 0 against pass 1 (a near hit):
`near` up to +70 cycles, `far` up to +215 (a hit in the other partition, measured +140..+200),
`dram` beyond (a DRAM read: +225..+290 through a near home, +370..+475 through a far one)."""
import csv, gzip, sys
from collections import defaultdict

rows = list(csv.DictReader(gzip.open(sys.argv[1], 'rt')))
far_home = {r['step']: int(r['pass0_cycles']) - int(r['pass1_cycles']) > 70
            for r in rows if r['config'] == 'rd_other' and r['rep'] == '0'}
counts = defaultdict(lambda: [0, 0, 0])  # insertion order: the run's order of configurations
for r in rows:
    key = (r['config'], r['rep'], 'other' if far_home[r['step']] else 'own')
    d = int(r['pass0_cycles']) - int(r['pass1_cycles'])
    counts[key][0 if d <= 70 else 1 if d <= 215 else 2] += 1
out = csv.writer(sys.stdout, lineterminator='\n')
out.writerow(['config', 'rep', 'home', 'lines', 'near', 'far', 'dram'])
for key, c in counts.items():
    out.writerow([*key, sum(c), *c])
