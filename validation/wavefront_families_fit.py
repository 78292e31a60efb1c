#!/usr/bin/env python3
"""Fit `[l1] replay_block_loads` across kernel families, with leave-one-family-out
cross-validation (docs/model.md "Coalescer and L1", data stage), and score the crowded-lines term
that was tried beside it and left out.

Input: docs/data/wavefront-terms.csv, one row per measured launch of every set whose kernel the
simulator counts by address alone (the H200 dev set, every H100 set, the H200 families and
few-block zloop sets; 425 launches, the histogram's atomics left out):
- measured: `l1tex__data_pipe_lsu_wavefronts.sum`;
- fixed: what no fitted constant touches: the data-stage rule's passes, shared wavefronts and
  the blockIdx passes (`wavefronts_per_block_index` x warps x components); since the banks are
  counted within each 4 lines (later on 2026-11-29) the 22 launches whose passes that changed
  (star1 and star4 in 2- and 4-wide blocks of the H200 and H100 dev sets and the H100 narrow
  set, the H100's jacobi2d 4x64 and 8x32) carry their new passes (the simulator's
  `instruction_counts` under both rules; for jacobi2d the change of its regenerated report);
- replays: missing_request_line_wavefronts x load_miss_request_lines + partial_line_wavefronts x
  load_partial_lines at the shipped 0.244 and 1 (the simulated wavefronts of the reports in
  docs/data of 2026-11-29 less `fixed`);
- crowded_lines: the lines of each load instruction beyond two per bank pass of the whole
  group, summed (the term tried beside replay_block_loads and not shipped; docs/model.md);
- load_instructions_per_block: load requests / blocks.
`fixed`, `crowded_lines` and the loads come from the simulator's address-only counts
(`sm_stage::instruction_counts`, dumped per launch for this fit on 2026-11-29).

The model: measured ~ fixed + replays x min(1, loads per block / K) (+ beta x crowded_lines with
--crowded). K is picked from a grid (and beta fitted by least squares on the relative error);
each family is predicted by the constants fitted on all the others. Prints the held-out errors
per family and per set, and the in-sample ones at the constants fitted on everything next to the
rule before (every replay charged).

    python3 validation/wavefront_families_fit.py [--crowded] [docs/data/wavefront-terms.csv]
"""
import csv
import statistics
import sys

GRID = (2, 4, 6, 8, 12, 16)


def load(path):
    rows = []
    for r in csv.DictReader(open(path)):
        for k in ("measured", "fixed", "replays", "crowded_lines", "load_instructions_per_block"):
            r[k] = float(r[k])
        rows.append(r)
    return rows


def predict(r, k, beta):
    if k is None:  # the rule before: every replay charged, no crowded lines
        return r["fixed"] + r["replays"]
    scale = min(1.0, r["load_instructions_per_block"] / k)
    return r["fixed"] + r["replays"] * scale + beta * r["crowded_lines"]


CROWDED = False


def fit_beta(rows, k):
    """Least squares of the relative error in beta at a given K (0 without --crowded)."""
    if not CROWDED:
        return 0.0
    num = den = 0.0
    for r in rows:
        x = r["crowded_lines"] / r["measured"]
        y = 1 - (r["fixed"] + r["replays"] * min(1.0, r["load_instructions_per_block"] / k)) / r["measured"]
        num += x * y
        den += x * x
    return num / den if den else 0.0


def fit(rows):
    best = None
    for k in GRID:
        beta = fit_beta(rows, k)
        sse = sum((predict(r, k, beta) / r["measured"] - 1) ** 2 for r in rows)
        if best is None or sse < best[0]:
            best = (sse, k, beta)
    return best[1], best[2]


def stats(errors):
    a = [abs(e) for e in errors]
    return f"median {100 * statistics.median(a):4.1f}%  worst {100 * max(a):5.1f}%"


def main():
    global CROWDED
    args = [a for a in sys.argv[1:] if a != "--crowded"]
    CROWDED = len(args) < len(sys.argv) - 1
    rows = load(args[0] if args else "docs/data/wavefront-terms.csv")
    k, beta = fit(rows)
    print(f"fitted on all {len(rows)} launches: replay_block_loads = {k}, "
          f"crowded_line_wavefronts = {beta:.3f}")
    held = {}
    print("left out (K and beta fitted on the other families):")
    for fam in sorted({r["family"] for r in rows}):
        kf, bf = fit([r for r in rows if r["family"] != fam])
        e = []
        for r in rows:
            if r["family"] == fam:
                held[id(r)] = predict(r, kf, bf) / r["measured"] - 1
                e.append(held[id(r)])
        before = [predict(r, None, 0) / r["measured"] - 1 for r in rows if r["family"] == fam]
        print(f"  {fam:12} n {len(e):3}  K {kf:2}  beta {bf:.3f}  held out {stats(e)}   before {stats(before)}")
    print(f"  all          n {len(rows):3}  held out {stats(held.values())}   "
          f"before {stats([predict(r, None, 0) / r['measured'] - 1 for r in rows])}")
    print("per set: held out | fitted on all | before")
    for s in sorted({r["set"] for r in rows}):
        sel = [r for r in rows if r["set"] == s]
        print(f"  {s:18} n {len(sel):3}  {stats([held[id(r)] for r in sel])} | "
              f"{stats([predict(r, k, beta) / r['measured'] - 1 for r in sel])} | "
              f"{stats([predict(r, None, 0) / r['measured'] - 1 for r in sel])}")


if __name__ == "__main__":
    main()
