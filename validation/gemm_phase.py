#!/usr/bin/env python3
"""How far apart the naive matrix product's blocks that share B lines run on one SM (issue 53,
item 5), from the logs of validation/gemm_sched.cu (tests/data/h200/gemm/sched/
gemm_sched_N_BXxBY.csv.gz: block, sm, start_ns, mid_ns = warp 0 at k = n / 2, end_ns).

Blocks of one column of C (the same blockIdx.x) read the same B line at each k; on one SM the L1
could serve the second block's from the first's. Per log: the median block life and the
coefficient of variation of the lives; of the pairs of blocks on one SM that start within 5 % of
a life of each other, the share in one column (chance: 1 / gridDim.x); and for those in one
column, how many k steps (a median life / n) apart they are at the start, at k = n / 2 and at the
end (median and 90th percentile). Standard library only.

    python3 validation/gemm_phase.py tests/data/h200/gemm/sched/*.csv.gz
"""
import csv
import gzip
import os
import statistics
import sys


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main(paths):
    print("log | life (us) | cv | co-started pairs | one column (chance) | k steps apart: start, mid, end (median / p90)")
    for path in paths:
        name = os.path.basename(path)
        parts = name.replace(".csv.gz", "").split("_")
        n, bx = int(parts[2]), int(parts[3].split("x")[0])
        columns = n // bx
        with gzip.open(path, "rt") as f:
            rows = [(int(r["block"]), int(r["sm"]), int(r["start_ns"]), int(r["mid_ns"]), int(r["end_ns"]))
                    for r in csv.DictReader(f)]
        lives = [e - s for _, _, s, _, e in rows]
        life = statistics.median(lives)
        cv = statistics.pstdev(lives) / statistics.mean(lives)
        by_sm = {}
        for r in rows:
            by_sm.setdefault(r[1], []).append(r)
        pairs, apart = 0, ([], [], [])
        for blocks in by_sm.values():
            for i, a in enumerate(blocks):
                for b in blocks[i + 1:]:
                    if abs(a[2] - b[2]) > 0.05 * life:
                        continue
                    pairs += 1
                    if a[0] % columns == b[0] % columns:
                        for j, col in enumerate((2, 3, 4)):
                            apart[j].append(abs(a[col] - b[col]) / (life / n))
        same = len(apart[0])
        steps = ", ".join(f"{quantile(a, 0.5):.1f} / {quantile(a, 0.9):.1f}" for a in apart) if same else "-"
        print(f"{name} | {life / 1000:.1f} | {cv:.3f} | {pairs} | {same / max(pairs, 1):.3f} ({1 / columns:.3f}) | {steps}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
