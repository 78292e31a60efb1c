#!/usr/bin/env python3
"""When a warp's stores to one line reach the L2 as one write: the launches of
validation/store_merge.cu (DIR: ncu.csv and run.log of validation/store_merge.sh). Per launch:
the L1's store sectors, the L2's write sectors and requests from the L1, the write sectors per
segment of 8 sectors (8 = the two halves merged, 16 = not; a segment is a warp's, or a pair's
in pair_warps), DRAM writes and time. Standard
library only.

    python3 validation/store_merge_summary.py DIR
"""
import collections
import csv
import io
import os
import sys

L1_STORES = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
L2_WRITES = "lts__t_sectors_srcunit_tex_op_write.sum"
L2_WRITE_REQUESTS = "lts__t_requests_srcunit_tex_op_write.sum"
DRAM_WRITES = "dram__sectors_write.sum"
TIME = "gpu__time_duration.sum"


def main(d):
    rows = [l for l in open(os.path.join(d, "ncu.csv")).read().splitlines() if l.startswith('"')]
    metrics = collections.defaultdict(dict)
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        v = r["Metric Value"].replace(",", "")
        metrics[int(r["ID"])][r["Metric Name"]] = float(v) if v not in ("n/a", "") else None
    launches = {}
    for line in open(os.path.join(d, "run.log")):
        fields = line.split()
        if fields and fields[0].isdigit():
            launches[int(fields[0])] = fields[1:]
    print("launch (kernel n p2 . bx) | L1 store sectors | L2 write sectors | L2 write requests"
          " | L2 write sectors a segment | DRAM write sectors | time us")
    for i, text in sorted(launches.items()):
        m = metrics[i]
        kernel, n = text[0], int(text[1])
        # A warp writes one segment of 8 sectors (pair_warps: a pair of warps); pair_store adds
        # n / 8 whole sectors of the other array.
        segments = n / 64 if kernel == "pair_warps" else n / 32
        writes = m[L2_WRITES] - (n / 8 if kernel == "pair_store" else 0)
        requests = m.get(L2_WRITE_REQUESTS)
        print(f"{' '.join(text)} | {m[L1_STORES]:.0f} | {m[L2_WRITES]:.0f} | "
              f"{requests if requests is None else f'{requests:.0f}'} | {writes / segments:.2f} | "
              f"{m[DRAM_WRITES]:.0f} | {m[TIME] / 1e3:.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
