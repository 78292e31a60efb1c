#!/usr/bin/env python3
"""What a second load of a narrow tile costs in the L1 data stage, hit or shifted (the H200 run of
2026-12-03, tests/data/h200/wavefront_replay/ncu_rows_hits.csv and launches_rows_hits.txt;
validation/wavefront_replay.cu's `rows` kernel, README.md there).

Each `rows` launch loads a bx x by tile (rows `pitch` elements apart) once (hit 0), or loads it and
then re-reads it: the same tile (hit 1, issued right after the first load, so its lines are
still being filled), the tile one element on (hit 2, a stencil's x + 1 load), or, on doubles, 8
elements on (hit 9: the other half of the lines an 8-wide tile touches, present but their
sectors not). Printed per pattern: the first load's global-load passes per warp (measured, by
the data-stage rule of src/sim/data_stage.rs, and its lines), then for each re-read the passes it
adds per warp (the launch's less the hit-0 launch's) against the rule for the re-read's
addresses, the lines it touches and the share of sectors that hit. Where the `copyrows` run is
there too (ncu_copyrows.csv: the same tiles loaded and stored), the stores' passes against the
rule, per pattern and per line.

    python3 validation/wavefront_rows_hits.py [--data DIR]
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
    d = ap.parse_args().data
    runs = s.load_run(os.path.join(d, "ncu_rows_hits.csv"), os.path.join(d, "launches_rows_hits.txt"), "hits")
    by = {}
    for r in runs:
        r["per_warp"] = r[s.WF_GLOBAL] / r[s.WARPS]
        by[(r["type"], r["bx"], r["by"], r["pitch"], r["hit"])] = r
    print(f"{len(runs)} launches; passes per warp: measured / rule / lines (re-reads: added passes / rule / lines / hit %)")
    over = {1: [], 2: [], 9: []}
    for (t, bx, by_, pitch, hit), r in sorted(by.items()):
        if hit:
            continue
        first, lines, _ = s.rule_passes(r)
        out = f"{t} {bx:2}x{by_:<3} pitch {pitch}: {r['per_warp']:5.2f} / {first:4.1f} / {lines:4.1f}"
        for h in (1, 2, 9):
            q = by.get((t, bx, by_, pitch, h))
            if q is None:
                continue
            added = q["per_warp"] - r["per_warp"]
            p, n, _ = s.rule_passes(q, h - 1)
            over[h].append((added - p) / n)
            out += f" | h{h} {added:5.2f} / {p:4.1f} / {n:4.1f} / {100 * q[s.HIT] / q[s.SEC]:3.0f} %"
        print(out)
    for h, name in ((1, "the same tile"), (2, "one element on"), (9, "8 doubles on")):
        v = over[h]
        print(f"re-read of {name}: passes beyond the rule per line it touches, median {statistics.median(v):.3f}"
              f" (range {min(v):.3f} to {max(v):.3f}, {len(v)} patterns)")
    stores(d, by)


def stores(d, loads):
    """The `copyrows` run (ncu_copyrows.csv, launches_copyrows.txt), when there is one: the tile
    loaded and stored; the stores' passes per warp (all wavefronts less the loads' and the 2 per
    warp of the block index reads) against the rule, beside the same tile's load alone."""
    path = os.path.join(d, "ncu_copyrows.csv")
    if not os.path.exists(path):
        return
    runs = s.load_run(path, os.path.join(d, "launches_copyrows.txt"), "copyrows")
    print(f"\ncopyrows, {len(runs)} launches; per warp: store passes measured / rule / lines | the load's in the copy / alone")
    over = collections.defaultdict(list)
    for r in sorted(runs, key=lambda r: (r["type"], r["bx"], r["by"], r["pitch"])):
        w = r[s.WARPS]
        store = (r[s.WF] - r[s.WF_GLOBAL] - r[s.WF_SHARED]) / w
        p, n, _ = s.rule_passes(r)
        alone = loads.get((r["type"], r["bx"], r["by"], r["pitch"], 0))
        alone = f"{alone['per_warp']:5.2f}" if alone else "  -  "
        over[(r["bx"] * r["by"] // 32, r["pitch"] == 4104)].append((store - p) / n)
        print(f"{r['type']} {r['bx']:2}x{r['by']:<3} pitch {r['pitch']}: {store:5.2f} / {p:4.1f} / {n:4.1f} | "
              f"{r[s.WF_GLOBAL] / w:5.2f} / {alone}")
    for (wpb, p4104), v in sorted(over.items()):
        print(f"stores beyond the rule per line, {wpb} warp(s) a block{', pitch 4104' if p4104 else ''}: "
              f"median {statistics.median(v):.3f} (range {min(v):.3f} to {max(v):.3f}, {len(v)} patterns)")


if __name__ == "__main__":
    main()
