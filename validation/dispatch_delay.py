#!/usr/bin/env python3
"""How long an SM's slot stays empty between blocks, in block placement logs of validation/sched.cu
(columns block, sm, start_ns, end_ns): for every block, its start less the latest end of a block
on the same SM before it (blocks of the first wave, which follow none, are left out). Prints the
deciles 1, 5 and 9 of that delay, the median block life, and the median delay over the median
life. The schedule's turnover (`[schedule] turnover_turns`, docs/model.md "Schedule") stands for
this delay.

    python3 validation/dispatch_delay.py LOG.csv.gz ...
"""
import bisect
import csv
import gzip
import statistics
import sys
from collections import defaultdict


def main(paths):
    print("log,blocks,median_life_ns,delay_d1_ns,delay_median_ns,delay_d9_ns,delay_over_life")
    for path in paths:
        with gzip.open(path, "rt") as f:
            rows = [(int(r["sm"]), int(r["start_ns"]), int(r["end_ns"])) for r in csv.DictReader(f)]
        ends = defaultdict(list)
        for sm, _, end in rows:
            ends[sm].append(end)
        for e in ends.values():
            e.sort()
        delays = []
        for sm, start, _ in rows:
            i = bisect.bisect_right(ends[sm], start) - 1
            if i >= 0:
                delays.append(start - ends[sm][i])
        delays.sort()
        n = len(delays)
        d1, d5, d9 = (delays[n * k // 10] for k in (1, 5, 9))
        life = statistics.median(end - start for _, start, end in rows)
        print(f"{path.split('/')[-1]},{len(rows)},{life:g},{d1},{d5},{d9},{d5 / life:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
