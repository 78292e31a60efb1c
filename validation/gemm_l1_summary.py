#!/usr/bin/env python3
"""The naive matrix product's L1 against the L1's size and the blocks an SM holds: the launches
of validation/gemm_l1.cu (tests/data/h100/gemm_l1/: ncu.csv, run.log; measured on an H100 SXM,
the H200's SM and L1). Per launch: n, the block,
the dynamic shared memory a block and the carveout asked for, the shared memory the driver
configured (the L1 keeps the rest of 256 KiB), the blocks an SM may hold (the least of its shared memory's,
threads' and blocks' limits), the L1's lookup misses,
the L2's reads from the L1, and the misses and L2 reads over the load sectors the warps ask for
(1.0 = no warp ever finds a sector another warp or block loaded). tests/data/h100/gemm_l1_waves/
holds launches of the first rows of blocks only (one wave, a few): a line's eighth number. Standard library only.

    python3 validation/gemm_l1_summary.py [DIR]
"""
import collections
import csv
import io
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
MISS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"
L2_READS = "lts__t_sectors_srcunit_tex_op_read.sum"
TIME = "gpu__time_duration.sum"
CONFIG = "launch__shared_mem_config_size"
BLOCKS = "launch__occupancy_limit_shared_mem"
MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM = 32, 2048  # the SM's own limits on resident blocks and threads (GH100)


def main(d):
    rows = [l for l in open(os.path.join(d, "ncu.csv")).read().splitlines() if l.startswith('"')]
    metrics = collections.defaultdict(dict)
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        v = r["Metric Value"].replace(",", "")
        try:
            metrics[int(r["ID"])][r["Metric Name"]] = float(v)
        except ValueError:
            pass
    print("n | block | rows of blocks | dyn. shared | carveout % | shared config KiB | L1 KiB | blocks/SM | time us"
          " | L1 misses | L2 reads | misses / load sectors | L2 reads / load sectors")
    for line in open(os.path.join(d, "run.log")):
        parts = line.split()
        if len(parts) < 7 or parts[1] != "naive":
            continue
        i = int(parts[0])
        n, bx, by, smem, carve = map(int, parts[2:7])
        rows_of_blocks = int(parts[7]) if len(parts) > 7 else (n + by - 1) // by
        m = metrics[i]
        cfg = m.get(CONFIG, float("nan")) / 1024
        print(f"{n} | {bx}x{by} | {rows_of_blocks} | {smem} | {carve} | {cfg:.0f} | {256 - cfg:.0f} | {min(MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM // (bx * by), m.get(BLOCKS, float('nan'))):.0f}"
              f" | {m[TIME] / 1e3:.1f} | {m[MISS]:.0f} | {m[L2_READS]:.0f} | {m[MISS] / m[SECTORS]:.3f}"
              f" | {m[L2_READS] / m[SECTORS]:.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "data", "h100", "gemm_l1"))
