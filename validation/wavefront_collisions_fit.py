#!/usr/bin/env python3
"""The L1 replay constants refitted beside the loads' line collisions (issue 53, item 4;
docs/model.md "Rows on disjoint banks in different lines"), each kernel family held out in turn.

`sim::data_stage::load_line_collisions` charges a load whose group of lanes reads rows in
different lines what the H200's `rows` benchmark measured (no constant fitted). Part of that
cost was absorbed before by the replay terms of `extra_wavefronts` (fitted over all widths), so
they are refitted beside it: per launch

  wavefronts = fixed + min(1, loads per block / replay_block_loads) x
               (m x missing request lines + p x partly present lines + f x lines hit in flight)

with `fixed` everything else (the bank-rule passes, the collisions when on, shared wavefronts,
shuffles, predicated-off instructions, special-register reads), by least squares on the
relative error of `l1tex__data_pipe_lsu_wavefronts.sum`, m, p, f >= 0, over every measured
launch of the 21 validation reports; each family is then predicted by the constants fitted on
the others. Printed: in sample and held out, without the collisions, with them, and with a
share of them fitted as a fourth coefficient.

Input: a CSV (docs/data/wavefront-collisions.csv) of one row per launch: set, launch, family,
measured, simulated wavefronts (collisions on, the shipped constants before the refit: 0.283,
0.096, 0.145, K = 8), data_passes, collisions (32nds of a pass), miss_lines, partial_lines,
in_flight_lines, load_requests, blocks. `--collect DIR OUT.csv` builds it from DIR/<set>.json
(the validate reports) and DIR/<set>.log (the `L1TERMS` lines an instrumented build printed,
`validation/wavefront_collisions.patch`: `GT_L1_TERMS=1 gputraffic validate ... --sample`).

    python3 validation/wavefront_collisions_fit.py [CSV]
    python3 validation/wavefront_collisions_fit.py --collect DIR OUT.csv
"""
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_fit import family  # noqa: E402
from wavefront_stores_fit import solve, summary  # noqa: E402

WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts.sum"
# The constants the CSV was collected with (hw-configs/h200.toml and h100-sxm.toml, 2026-12-03).
COLLECTED = (0.283, 0.096, 0.145)
K = 8.0
FIELDS = ["set", "launch", "family", "measured", "simulated", "data_passes", "collisions",
          "miss_lines", "partial_lines", "in_flight_lines", "load_requests", "blocks"]


def collect(folder, out):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        name = os.path.basename(path)[:-5]
        report = json.load(open(path))
        measured = {r["launch"]: (r["kernel"], r["metrics"][WAVEFRONTS]["measured"])
                    for r in report["rows"] if WAVEFRONTS in r["metrics"]}
        for line in open(os.path.join(folder, name + ".log")):
            if not line.startswith("L1TERMS\t"):
                continue
            label, *terms = line.rstrip("\n").split("\t")[1:]
            # The label starts with the kernel's source (a trace's name or a .cu path).
            label = label.split(" ", 1)[1]
            if label not in measured:
                continue
            kernel, m = measured[label]
            rows.append([name.removeprefix("validation-"), label, family(kernel), m] + terms)
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(FIELDS)
        w.writerows(rows)
    print(f"{len(rows)} launches -> {out}")


def load(path):
    rows = []
    for r in csv.DictReader(open(path)):
        for k in FIELDS[3:]:
            r[k] = float(r[k])
        scale = min(1.0, r["load_requests"] / max(r["blocks"], 1.0) / K)
        terms = [scale * r[k] for k in ("miss_lines", "partial_lines", "in_flight_lines")]
        replay = sum(c * t for c, t in zip(COLLECTED, terms))
        # The collisions as a term of their own (the third form fits their share beside the rest).
        terms.append(r["collisions"] / 32)
        # What no replay constant touches, with the collisions and without them.
        r["fixed_on"] = r["simulated"] - round(replay)
        r["fixed_off"] = r["fixed_on"] - round(r["collisions"] / 32)
        r["terms"] = terms
        rows.append(r)
    return rows


def fit(rows, fixed, n=3):
    """Least squares of the relative error in (m, p, f) (and the collisions' share when `n` is
    4), each kept >= 0 (a coefficient that comes out negative is dropped and the rest
    refitted)."""
    free = list(range(n))
    while free:
        design = [[r["terms"][j] / r["measured"] for j in free] for r in rows]
        sol = solve(design, [1.0 - r[fixed] / r["measured"] for r in rows])
        if all(s >= 0 for s in sol):
            break
        free = [j for j, s in zip(free, sol) if s >= 0]
    c = [0.0] * n
    for j, s in zip(free, sol if free else []):
        c[j] = s
    return tuple(c)


def error(r, fixed, c):
    return (r[fixed] + round(sum(x * t for x, t in zip(c, r["terms"])))) / r["measured"] - 1


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--collect" in sys.argv:
        collect(args[0], args[1])
        return
    rows = load(args[0] if args else "docs/data/wavefront-collisions.csv")
    fams = sorted({r["family"] for r in rows})
    print(f"{len(rows)} launches, {len(fams)} families")
    forms = (("without collisions", "fixed_off", 3), ("with collisions", "fixed_on", 3),
             ("with a fitted share of the collisions", "fixed_off", 4))
    for name, fixed, n in forms:
        c = fit(rows, fixed, n)
        print(f"{name}: shipped constants {summary([error(r, fixed, COLLECTED) for r in rows])}")
        share = f", collisions {c[3]:.3f}" if n == 4 else ""
        print(f"  fitted on all: m {c[0]:.3f}, p {c[1]:.3f}, f {c[2]:.3f}{share}: "
              f"{summary([error(r, fixed, c) for r in rows])}")
        held = []
        for fam in fams:
            cf = fit([r for r in rows if r["family"] != fam], fixed, n)
            e = [error(r, fixed, cf) for r in rows if r["family"] == fam]
            held += e
            if "--per-family" in sys.argv:
                print(f"    {fam:18} n {len(e):3}  ({', '.join(f'{x:.3f}' for x in cf)})  held out {summary(e)}")
        print(f"  each family held out: {summary(held)}")
        if "--per-set" in sys.argv:
            for s in sorted({r["set"] for r in rows}):
                sel = [r for r in rows if r["set"] == s]
                print(f"    {s:24} n {len(sel):3}  {summary([error(r, fixed, c) for r in sel])}")


if __name__ == "__main__":
    main()
