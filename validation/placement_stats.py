#!/usr/bin/env python3
"""How the GPU places consecutive blocks after the first wave, from block-to-SM logs of
validation/sched.cu (block,sm,start_ns,end_ns; .csv or .csv.gz). Standard library only.

    placement_stats.py [--sides PARTITION_MAP] GPC_PAIRS SLOTS LOG [LOG ...]

GPC_PAIRS: an l2_gpc_pairs.csv.gz of validation/l2_inflight.cu (the GPC map, via l2_gpc_map.py);
SLOTS: resident blocks per SM (the first wave, SLOTS x SMs blocks, is left out). Per log, as CSV:
the share of blocks b whose block b + 1 runs in the same GPC, the same TPC (SMs 2k, 2k + 1) and the
same SM; the share of pairs of blocks ending in the same %globaltimer stamp (32 ns) that ran in the
same GPC, and that share by chance (two SMs drawn at random); and the median block life. With
--sides (an l2_partition_map.csv of validation/l2_near_far.cu --map: SM 0's side, and the SMs that
find SM 0's reads far on the other) a last column, same_side: the share of blocks b whose block
b + 1 runs on the same side of the L2 (chance: 65 / 131 on 132 SMs in two halves).
"""
import collections
import csv
import gzip
import importlib.util
import os
import sys


def gpc_of(pairs):
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("l2_gpc_map", os.path.join(here, "l2_gpc_map.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {sm: g for g, group in enumerate(mod.groups(pairs)) for sm in group}


def same_pairs(groups):
    """Pairs of the given GPC labels that name the same GPC."""
    return sum(k * (k - 1) // 2 for k in collections.Counter(groups).values())


def side_of(partition_map):
    """SM -> 0 (SM 0's side of the L2) or 1, from the rows measured from SM 0."""
    side = {0: 0}
    with open(partition_map) as f:
        for r in csv.DictReader(f):
            if r["ref_sm"] == "0":
                side[int(r["warm_sm"])] = 1 if float(r["far_fraction"]) > 0.25 else 0
    return side


def main(pairs, slots, logs, side=None):
    gpc = gpc_of(pairs)
    sms = len(gpc)
    chance = same_pairs(gpc.values()) / (sms * (sms - 1) // 2)
    print("log,slots,blocks,same_gpc,same_tpc,same_sm,same_stamp_same_gpc,same_stamp_chance,median_life_ns"
          + (",same_side" if side else ""))
    for log in logs:
        opener = gzip.open if log.endswith(".gz") else open
        with opener(log, "rt") as f:
            rows = sorted(tuple(int(v) for v in r) for r in csv.reader(f) if r and r[0].isdigit())
        later = rows[slots * sms:]
        pairs_ = list(zip(later, later[1:]))
        n = len(pairs_)
        same_gpc = sum(gpc[a[1]] == gpc[b[1]] for a, b in pairs_) / n
        same_tpc = sum(a[1] // 2 == b[1] // 2 for a, b in pairs_) / n
        same_sm = sum(a[1] == b[1] for a, b in pairs_) / n
        # Pairs of later blocks that end in the same stamp: do slots free GPC by GPC?
        by_stamp = {}
        for r in later:
            by_stamp.setdefault(r[3], []).append(gpc[r[1]])
        same = sum(same_pairs(groups) for groups in by_stamp.values())
        total = sum(len(groups) * (len(groups) - 1) // 2 for groups in by_stamp.values())
        life = sorted(r[3] - r[2] for r in rows)[len(rows) // 2]
        line = "%s,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%d" % (os.path.basename(log), slots, len(rows), same_gpc,
                                                     same_tpc, same_sm, same / total, chance, life)
        if side:
            line += ",%.3f" % (sum(side[a[1]] == side[b[1]] for a, b in pairs_) / n)
        print(line)


if __name__ == "__main__":
    args = sys.argv[1:]
    sides = None
    if args[:1] == ["--sides"] and len(args) > 1:
        sides = side_of(args[1])
        args = args[2:]
    if len(args) < 3:
        sys.exit(__doc__)
    main(args[0], int(args[1]), args[2:], sides)
