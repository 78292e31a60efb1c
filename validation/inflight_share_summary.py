#!/usr/bin/env python3
"""Whether a line in flight for another warp counts as an L1 hit on the H200: the launches of
validation/inflight_share.cu (tests/data/h200/inflight_share/: ncu.csv, run.log with the blocks
each SM ran, launches.txt). Per launch: the load sectors, the L1's lookup misses and hits, the
L2's reads from the L1, and the misses over the sectors the SMs' regions hold (each SM's warps
read the same 4096 lines, 16384 sectors, or K regions of them in "regions G K", or the first M
lines of each with a fifth number M; 1.0 = every
sharer hit what the first loaded, the sharers' count = none did). The H100's launches of many
sharers are in tests/data/h100/inflight_share_many/, those whose warps compete for issue in
tests/data/h100/inflight_share_warps/. Standard library only.

    python3 validation/inflight_share_summary.py [DIR]
"""
import collections
import csv
import io
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
MISS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"
L2_READS = "lts__t_sectors_srcunit_tex_op_read.sum"
WARPS = "sm__warps_active.avg.per_cycle_active"
TIME = "gpu__time_duration.sum"


def main(d):
    rows = [l for l in open(os.path.join(d, "ncu.csv")).read().splitlines() if l.startswith('"')]
    metrics = collections.defaultdict(dict)
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        v = r["Metric Value"].replace(",", "")
        metrics[int(r["ID"])][r["Metric Name"]] = float(v) if v not in ("n/a", "") else None
    used = {}
    for line in open(os.path.join(d, "run.log")):
        m = re.match(r"(\d+) (.*?) \| SMs used (\d+)", line)
        if m:
            used[int(m.group(1))] = (m.group(2), int(m.group(3)), line.split("blocks per SM:")[1].strip())
    print("launch | load sectors | lookup misses | L2 reads | misses / regions' sectors | SMs used, blocks per SM | warps active | time us")
    for i, (text, sms, hist) in sorted(used.items()):
        m = metrics[i]
        mode = text.split()
        lines = int(mode[4]) if len(mode) > 4 else 4096  # M: the region's first M lines only
        regions = sms * (int(mode[2]) if mode[0] == "regions" else 1) * lines * 4
        print(f"{text} | {m[SECTORS]:.0f} | {m[MISS]:.0f} | {m[L2_READS]:.0f} | {m[MISS] / regions:.3f} | {sms}, {hist}"
              f" | {m.get(WARPS, float('nan')):.1f} | {m[TIME] / 1e3:.1f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "data", "h200", "inflight_share"))
