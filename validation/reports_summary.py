#!/usr/bin/env python3
"""Figures over every launch of a set of `validate` reports (docs/validation.md's "over all N
launches of every report" lines): per metric the median, 90th percentile and worst |relative
error| of the simulated against the measured value; the groups whose first-ranked shape runs below
97 % of the fastest and those whose fastest is not in the top 3.

    python3 validation/reports_summary.py docs/data/validation-h*.json
"""
import json
import statistics
import sys

METRICS = {
    "L1 wavefronts": "l1tex__data_pipe_lsu_wavefronts.sum",
    "time": "gpu__time_duration.sum",
    "L2 reads from L1": "lts__t_sectors_srcunit_tex_op_read.sum",
    "DRAM reads": "dram__sectors_read.sum",
    "DRAM writes": "dram__sectors_write.sum",
}


def quantiles(errors):
    a = sorted(abs(e) for e in errors)
    return (f"median {100 * statistics.median(a):5.2f} %  p90 {100 * a[int(0.9 * (len(a) - 1))]:5.1f} %"
            f"  worst {100 * a[-1]:5.1f} %")


def main(paths):
    rows, groups = [], []
    for p in paths:
        d = json.load(open(p))
        rows += [(p, r) for r in d["rows"]]
        groups += [(p, g) for g in d["groups"]]
    print(f"{len(rows)} launches, {len(groups)} groups, {len(paths)} reports")
    for name, metric in METRICS.items():
        errs = [r["metrics"][metric]["rel_err"] for _, r in rows
                if metric in r["metrics"] and r["metrics"][metric].get("rel_err") is not None]
        worst = max(((abs(r["metrics"][metric]["rel_err"]), r["launch"]) for _, r in rows
                     if metric in r["metrics"] and r["metrics"][metric].get("rel_err") is not None))
        print(f"{name:17} n {len(errs):4}  {quantiles(errs)}  ({worst[1]})")
    ranked = [(p, g) for p, g in groups if g.get("pick_efficiency") is not None]
    low = [(p, g) for p, g in ranked if g["pick_efficiency"] < 0.97]
    missed = [(p, g) for p, g in ranked if g.get("top3_efficiency") is not None and g["top3_efficiency"] < 1]
    print(f"groups ranked {len(ranked)}: picked below 97 % {len(low)}, fastest not in the top 3 {len(missed)}")
    for p, g in low:
        print(f"  below 97 %: {g['group']} {100 * g['pick_efficiency']:.1f} % ({p})")
    for p, g in missed:
        print(f"  not in top 3: {g['group']} best of three {100 * g['top3_efficiency']:.1f} % ({p})")


if __name__ == "__main__":
    main(sys.argv[1:])
