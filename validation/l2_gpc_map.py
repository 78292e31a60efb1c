#!/usr/bin/env python3
"""Which SMs' L2 requests merge, from the pair launches of validation/l2_inflight.cu (`pairs`):
two SMs read the same 1 MiB together; where the L2 sees one SM's worth of read sectors (< 1.25x),
their requests merged on the way. The groups (the GPCs) are printed as a TOML list, or with --csv
as `sm,gpc` rows (the GPC numbered by its place in the list):

    python3 validation/l2_gpc_map.py tests/data/h200/micro/l2_gpc_pairs.csv.gz [--csv]
"""
import csv
import gzip
import sys


def groups(path):
    merged = {}
    single = None
    rows = list(csv.DictReader(gzip.open(path, "rt")))
    for r in rows:
        a, b = map(int, r["sms"].split(";"))
        merged.setdefault(a, {a})
        if int(r["lts__t_sectors_srcunit_tex_op_read.sum"]) < 1.25 * int(r["doubles"]) * 8 // 32:
            merged[a].add(b)
    out = []
    for a in sorted(merged):
        g = sorted(merged[a])
        if g not in out:
            out.append(g)
    return out


if __name__ == "__main__":
    gs = groups(sys.argv[1])
    if "--csv" in sys.argv[2:]:
        print("sm,gpc")
        for sm, g in sorted((sm, g) for g, group in enumerate(gs) for sm in group):
            print("%d,%d" % (sm, g))
        sys.exit(0)
    print("# %d groups, %d SMs" % (len(gs), sum(map(len, gs))))
    print("gpcs = [%s]" % ", ".join("[%s]" % ", ".join(map(str, g)) for g in gs))
