#!/usr/bin/env python3
"""Joins validation/l2_inflight.cu's launch list with ncu's export into one tidy CSV (stdout):
    python3 validation/l2_inflight_join.py OUTDIR > l2_inflight.csv
Columns: id, blocks ("pair": two chosen SMs), doubles, shift, sms_used, sms, then per launch
l2_read_sectors, l2_read_requests, l2_lookup_miss_sectors, l2_lookup_hit_sectors, fabric_sectors,
dram_read_sectors, time_ns."""
import collections
import csv
import re
import sys

METRICS = [("lts__t_sectors_srcunit_tex_op_read.sum", "l2_read_sectors"),
           ("lts__t_requests_srcunit_tex_op_read.sum", "l2_read_requests"),
           ("lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "l2_lookup_miss_sectors"),
           ("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "l2_lookup_hit_sectors"),
           ("lts__t_sectors_srcunit_ltcfabric.sum", "fabric_sectors"),
           ("dram__sectors_read.sum", "dram_read_sectors"),
           ("gpu__time_duration.sum", "time_ns")]


def main(out):
    rows = list(csv.reader(open(out + "/l2_inflight_ncu.csv")))
    idx = {k: i for i, k in enumerate(rows[0])}
    values = collections.defaultdict(dict)
    for r in rows[1:]:
        if len(r) == len(rows[0]) and r[idx["ID"]].isdigit():
            values[int(r[idx["ID"]])][r[idx["Metric Name"]]] = r[idx["Metric Value"]].replace(",", "")
    w = csv.writer(sys.stdout)
    w.writerow(["id", "blocks", "doubles", "shift", "sms_used", "sms"] + [n for _, n in METRICS])
    # Runs made before l2_inflight.sh sent ncu's progress to its log have ncu's lines cut into the
    # launch list (block-buffered stdout): drop them, which joins each cut row again.
    text = re.sub(r"==PROF==[^\n]*\n", "", open(out + "/l2_inflight_runs.csv").read())
    for m in re.finditer(r"(\d+),(pair|\d+),(\d+),(\d+),(\d+),([\d;]*)", text):
        i = int(m.group(1))
        w.writerow(list(m.groups()) + [values[i].get(k, "") for k, _ in METRICS])


if __name__ == "__main__":
    main(sys.argv[1])
