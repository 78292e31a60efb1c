#!/usr/bin/env python3
"""Whether one L1 data-stage pass serves rows that lie on disjoint banks but in different lines
(the H200 runs of 2026-12-03, tests/data/h200/wavefront_replay/ncu_linestep.csv and
ncu_stencil.csv with their launch lists; validation/wavefront_replay.cu's `rows` and `copyrows`
kernels, launch lists validation/wavefront_replay_linestep_launches.txt and
wavefront_replay_stencil_launches.txt; docs/model.md "Rows on disjoint banks in different lines").

Every launch loads an 8-wide tile once (every sector missing), in blocks of one warp (8x4) or
eight (8x32), rows `pitch` elements apart: b banks and k whole lines further per row. The bank
rule of src/sim/data_stage.rs (banks counted within each 4 lines of a group of lanes) gives one
pass per group where the rows' banks are disjoint, whatever lines they lie in. Printed per
pattern: the global-load passes per warp measured, by the rule, and their ratio; then the ratio's
median and range per class (same banks; disjoint banks, by element size; the stencils' padded
layout, 3-5 elements into rows of 264 or 4104 doubles). Then, from the second run, the stencils'
padded layout (4 doubles into each row) 8, 16 and 32 wide: per warp, the load missing, the same
tile re-read at once (its sectors hitting), the tile one element on, and the store of the tile
(the launch's wavefronts less its loads' and its special-register reads'), each against the rule.
Last, a candidate rule scored on every one-warp `rows` launch missing whole (these runs and
ncu_rows_hits.csv's hit-0 launches): within each 4 lines of a group, the bank rule's p passes,
each joining about min(k, ceil(lines / p)) lines of k distinct sector footprints (the sectors of
its line the group reads), which collide as if placed at random among 4 slots: a pass costs the
expected fullest slot, 1, 1.25, 1.69, 2.03 for 1-4 such lines. No constant is fitted.

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
    stencil(a.data)
    candidate(a.data)


def per_warp(r, metric=s.WF_GLOBAL):
    """A launch's `metric` (by default its global loads' wavefronts) per launched warp."""
    return r[metric] / r[s.WARPS]


def store_passes(copy, offset):
    """A `copyrows` launch's store passes per warp (its wavefronts less its load's and its
    special-register reads'), and the rule's for the tile `offset` elements into each row."""
    return (per_warp(copy, s.WF) - per_warp(copy) - per_warp(copy, s.WF_SHARED),
            s.rule_passes(copy, shift=offset)[0])


def stencil(data):
    runs = s.load_run(os.path.join(data, "ncu_stencil.csv"), os.path.join(data, "launches_stencil.txt"), "stencil")
    by_key = {(r["kernel"], r["n"], r["hit"], r["bx"], r["by"], r["pitch"]): r for r in runs}
    print("stencil layout, doubles 4 into each row: passes per warp measured / rule "
          "(load missing | re-read at once | one element on | store; the aligned store)")
    for (kernel, n, hit, bx, by, pitch), r in by_key.items():
        if (kernel, n, hit) != ("rows", 5, 0):
            continue
        rule = s.rule_passes(r, shift=4)[0]
        again = per_warp(by_key[("rows", 5, 1, bx, by, pitch)]) - per_warp(r)
        shifted = per_warp(by_key[("rows", 5, 2, bx, by, pitch)]) - per_warp(r)
        rule_shifted = s.rule_passes(r, shift=5)[0]
        (st, st_rule), (st0, st0_rule) = (store_passes(by_key[("copyrows", offset + 1, 0, bx, by, pitch)], offset)
                                          for offset in (4, 0))
        print(f"  {bx:2}x{by:<2} pitch {pitch:4}: {per_warp(r):4.2f} / {rule:4.2f} | {again:4.2f} / {rule:4.2f} | "
              f"{shifted:4.2f} / {rule_shifted:4.2f} | {st:4.2f} / {st_rule:4.2f}; {st0:4.2f} / {st0_rule:4.2f}")



# The expected fullest of 4 slots holding n lines placed at random (n = 1-4).
FULLEST_SLOT = {1: 1.0, 2: 1.25, 3: 1.6875, 4: 2.03125}


def candidate_passes(addrs, size, collide=True):
    """The bank rule within each 4 lines of each lane group (data_stage.rs `passes`, over
    wavefront_replay_summary.tag_windows as its bank_passes), each pass's lines of distinct
    sector footprints colliding among 4 slots when `collide`."""
    total = 0.0
    for part, mine in s.tag_windows(addrs, size):
        p = max(collections.Counter(x % 32 for x in mine).values())
        footprints = {frozenset(x % 32 // 8 for x in mine if x >> 5 == line) for line in part}
        joined = min(len(footprints), -(-len(part) // p))
        total += p * (FULLEST_SLOT[joined] if collide else 1.0)
    return total


def candidate(data):
    runs = [(r, r["n"] - 1) for name in ("linestep", "stencil")
            for r in s.load_run(os.path.join(data, f"ncu_{name}.csv"), os.path.join(data, f"launches_{name}.txt"), name)]
    runs += [(r, 0) for r in s.load_run(os.path.join(data, "ncu_rows_hits.csv"),
                                        os.path.join(data, "launches_rows_hits.txt"), "hits")]
    errors = collections.defaultdict(list)
    for r, offset in runs:
        if r["kernel"] != "rows" or r["hit"] != 0 or r["bx"] * r["by"] != 32:
            continue
        addrs = [x + offset * r["size"] for x in s.warp_addresses(r, 0)]
        measured = r[s.WF_GLOBAL] / r[s.REQ]
        for name, collide in (("bank rule", False), ("slots", True)):
            errors[name].append(candidate_passes(addrs, r["size"], collide) / measured - 1)
    print("one-warp rows launches missing whole: passes by rule against measured")
    for name, e in errors.items():
        a = sorted(abs(x) for x in e)
        print(f"  {name:9} {len(a)} launches: median |error| {100 * statistics.median(a):4.1f} %, 90th percentile "
              f"{100 * a[int(0.9 * (len(a) - 1))]:4.1f} %, worst {100 * a[-1]:4.1f} %, mean {100 * statistics.mean(e):+5.1f} %")


if __name__ == "__main__":
    main()
