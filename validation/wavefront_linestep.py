#!/usr/bin/env python3
"""Whether one L1 data-stage pass serves rows that lie on disjoint banks but in different lines
(the H200 run of 2026-12-03, tests/data/h200/wavefront_replay/ncu_linestep.csv and
launches_linestep.txt; validation/wavefront_replay.cu's `rows` kernel, launch list
validation/wavefront_replay_linestep_launches.txt; docs/model.md "Rows on disjoint banks").

Every launch loads an 8-wide tile once (every sector missing), in blocks of one warp (8x4) or
eight (8x32), rows `pitch` elements apart: b banks and k whole lines further per row. The bank
rule of src/sim/data_stage.rs (banks counted within each 4 lines of a group of lanes) gives one
pass per group where the rows' banks are disjoint, whatever lines they lie in. Printed per
pattern: the global-load passes per warp measured, by the rule, and their ratio; then the ratio's
median and range per class (same banks; disjoint banks, by element size; the stencils' padded
layout, 3-5 elements into rows of 264 or 4104 doubles).

    python3 validation/wavefront_linestep.py [--data DIR] [--quiet]
"""
import argparse
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wavefront_replay_summary as s  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(s.ROOT, "tests", "data", "h200", "wavefront_replay"))
    ap.add_argument("--quiet", action="store_true", help="the class summary alone")
    a = ap.parse_args()
    runs = s.load_run(os.path.join(a.data, "ncu_linestep.csv"), os.path.join(a.data, "launches_linestep.txt"),
                      "linestep")
    classes = collections.defaultdict(list)
    for r in runs:
        offset = r["n"] - 1
        rule, lines, _ = s.rule_passes(r, shift=offset)
        measured = r[s.WF_GLOBAL] / r[s.REQ]
        banks = r["pitch"] * r["size"] % 128 // 4
        line_step = r["pitch"] * r["size"] // 128
        warps = r["bx"] * r["by"] // 32
        if not a.quiet:
            print(f"{r['type']} {r['bx']:2}x{r['by']:<2} offset {offset} pitch {r['pitch']:5} (banks +{banks:2}, "
                  f"lines +{line_step:3}): {measured:5.2f} / {rule:4.2f} = {measured / rule:4.2f}  ({lines:.1f} lines)")
        if offset:
            name = f"stencil layout {r['bx']}-wide doubles, pitch {r['pitch']}"
        elif banks == 0:
            name = "rows on the same banks"
        elif line_step == 0:
            name = "rows in one line"
        else:
            name = f"{r['type']} rows {banks} banks apart"
        classes[(warps, name)].append((measured, rule))
    print("class: measured / rule passes per warp, median (range), launches")
    for (warps, name), v in sorted(classes.items()):
        ratios = [m / p for m, p in v]
        print(f"  {warps} warp{'s' if warps > 1 else ' '} {name:42} {statistics.median(m for m, _ in v):5.2f} / "
              f"{statistics.median(p for _, p in v):4.2f}: x{statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}), {len(v)}")


if __name__ == "__main__":
    main()
