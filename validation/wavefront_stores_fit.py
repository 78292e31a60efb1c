#!/usr/bin/env python3
"""Which accesses cost the L1 data pipe more passes under load: the replay term of `[l1]`
(src/sim/data_stage.rs, `extra_wavefronts`) refitted with the stores and the loads that hit a
line still on its way, with leave-one-family-out cross-validation (issue 53; docs/model.md
"Coalescer and L1", data stage, "In-flight hits per line"). Its form "miss, partial, in flight 1-63
ticks" is the rule shipped since 2026-12-03 (`in_flight_hit_wavefronts`, `in_flight_hit_ticks`;
src/sim/data_stage.rs `hit_in_flight`), its coefficients those of hw-configs/h200.toml. It follows
validation/wavefront_pending_fit.py (2026-11-30), over the lifted H200 sets that study did not
run, and counts the hits in flight per line by their age.

The rule the CSV was collected under (shipped until 2026-12-03: 0.244 and 1, K = 8,
wavefront_pending_fit.py's COLLECTED_*) charges `missing_request_line_wavefronts` per line of
every load instruction that misses a sector and `partial_line_wavefronts` per line part present,
part missing, both times min(1, load instructions per block / `replay_block_loads`). Here the same
form is fitted with other terms beside or instead of those:
- pending_b: load lines that hit (every sector already asked for) a line whose last miss, on
  the same SM, was issued a few scheduler ticks before (a tick is one warp instruction an SM
  issues, src/sim/schedule.rs), by age bucket b: 0 = the same tick, b >= 1 = ages 2^(b-1) to
  2^b - 1, 11 = older. Ticks count within the scheduler's chunks (4096 ticks): a line missed
  in one chunk and hit in a later one counts at the difference of its two in-chunk ticks,
  mostly large, rarely not;
- store_sectors: the sectors the stores write.

Input: a CSV (docs/data/wavefront-stores.csv) with one row per measured launch:
set, launch, family, measured and simulated `l1tex__data_pipe_lsu_wavefronts.sum`, fixed (the
simulated wavefronts less the collected rule's replay term), scale (min(1, loads per block / K)), the
simulator's load_miss_request_lines, load_partial_lines, store sectors and pending_0..11.
The pending counts came from an instrumented build (validation/wavefront_stores.patch, on the
commit it names: a hash map per SM of each line's last miss tick, looked up at every load line
that hits, in `SmWorker::load`) whose `GT_PENDING=1 gputraffic validate` printed one
tab-separated line per launch on stderr:
  PENDING <label> <wavefronts> <miss lines> <partial lines> <load requests> <blocks> <ticks> [pending_0, ..]
`--collect DIR OUT.csv` builds the CSV from DIR/<set>.log (those lines) and DIR/<set>.json (the
validate reports; for the H200 dev set and the H100 dev and timing sets those of docs/data,
whose wavefronts the instrumented build reproduces: exactly on the H200, within 0.08 % on the
H100, whose sets ran with `validate --sample`).

    python3 validation/wavefront_stores_fit.py [CSV] [--per-family]
    python3 validation/wavefront_stores_fit.py docs/data/wavefront-stores-all-missing.csv --all-missing
    python3 validation/wavefront_stores_fit.py --collect DIR OUT.csv
"""
import csv
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_fit import family  # noqa: E402
# The replay constants of the reports the CSV was collected from (the 2026-11-30 study's script).
from wavefront_pending_fit import COLLECTED_K, COLLECTED_MISS, COLLECTED_PARTIAL, write_csv  # noqa: E402

BUCKETS = 12
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts.sum"
STORE_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"


def collect(folder, out):
    rows = []
    for log in sorted(glob.glob(f"{folder}/*.log")):
        name = os.path.basename(log)[:-4]
        report = f"{folder}/{name}.json"
        if not os.path.exists(report):
            continue
        counts = {}
        for line in open(log):
            if not line.startswith("PENDING"):
                continue
            f = line.rstrip("\n").split("\t")
            label = f[1].split(" ", 1)[1]  # "<kernel source> <launch>"
            wf, miss, partial, loads, blocks, ticks = (int(x) for x in f[2:8])
            hist = [int(x) for x in f[8].strip("[]").split(",")]
            counts[label] = (wf, miss, partial, loads, blocks, hist)
        for x in json.load(open(report))["rows"]:
            c = counts.get(x["launch"])
            m = x["metrics"].get(WAVEFRONTS)
            if not c or not m or not m.get("measured"):
                continue
            wf, miss, partial, loads, blocks, hist = c
            scale = min(1.0, loads / blocks / COLLECTED_K)
            rows.append({
                "set": name, "launch": x["launch"], "family": family(x["kernel"]),
                "measured": m["measured"], "simulated": m["simulated"],
                "fixed": wf - scale * (COLLECTED_MISS * miss + COLLECTED_PARTIAL * partial), "scale": scale,
                "miss_lines": miss, "partial_lines": partial,
                "store_sectors": x["metrics"].get(STORE_SECTORS, {}).get("simulated", 0.0),
                **{f"pending_{b}": hist[b] for b in range(BUCKETS)},
            })
    write_csv(rows, out)


def load(path):
    rows = []
    for r in csv.DictReader(open(path)):
        for k in r:
            if k not in ("set", "launch", "family"):
                r[k] = float(r[k])
        rows.append(r)
    return rows


def pending(lo, hi):
    return lambda r: sum(r[f"pending_{b}"] for b in range(lo, hi + 1))


MISS = lambda r: r["miss_lines"]  # noqa: E731
PARTIAL = lambda r: r["partial_lines"]  # noqa: E731
STORES = lambda r: r["store_sectors"]  # noqa: E731
FORMS = {
    "miss, partial (the collected form, refitted)": [MISS, PARTIAL],
    "miss, partial, in flight 1-63 ticks (shipped since 2026-12-03)": [MISS, PARTIAL, pending(1, 6)],
    "miss, partial, in flight 4-63 ticks": [MISS, PARTIAL, pending(3, 6)],
    "miss, partial, stores": [MISS, PARTIAL, STORES],
    "miss, partial, stores, in flight 1-63 ticks": [MISS, PARTIAL, STORES, pending(1, 6)],
    "partial, stores, in flight 1-63 ticks (no miss term)": [PARTIAL, STORES, pending(1, 6)],
}

# For docs/data/wavefront-stores-all-missing.csv (`--all-missing`), whose pending_0 holds the lines
# of load instructions that miss every sector they load (the patch's note).
ALL_MISSING = lambda r: r["pending_0"]  # noqa: E731
OTHER_MISSING = lambda r: r["miss_lines"] - r["pending_0"]  # noqa: E731
ALL_MISSING_FORMS = {
    "all-missing lines, other missing lines, partial": [ALL_MISSING, OTHER_MISSING, PARTIAL],
}


def solve(a, y):
    """Least squares by the normal equations (a few unknowns)."""
    k = len(a[0])
    m = [[sum(r[i] * r[j] for r in a) for j in range(k)] + [sum(r[i] * v for r, v in zip(a, y))]
         for i in range(k)]
    for i in range(k):
        for j in range(k):
            if j != i and m[i][i]:
                f = m[j][i] / m[i][i]
                m[j] = [x - f * z for x, z in zip(m[j], m[i])]
    return [m[i][k] / m[i][i] if m[i][i] else 0.0 for i in range(k)]


def fit(rows, terms):
    """The terms' coefficients that minimise the squared relative error."""
    a = [[t(r) * r["scale"] / r["measured"] for t in terms] for r in rows]
    return solve(a, [1 - r["fixed"] / r["measured"] for r in rows])


def predict(r, coef, terms):
    return r["fixed"] + r["scale"] * sum(c * t(r) for c, t in zip(coef, terms))


def summary(errors):
    a = sorted(abs(e) for e in errors)
    return (f"median {100 * statistics.median(a):4.2f} %  p90 {100 * a[int(0.9 * (len(a) - 1))]:4.1f} %"
            f"  worst {100 * a[-1]:5.1f} %")


def main():
    if sys.argv[1:2] == ["--collect"]:
        collect(sys.argv[2], sys.argv[3])
        return
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = load(args[0] if args else "docs/data/wavefront-stores.csv")
    families = sorted({r["family"] for r in rows})
    print(f"{len(rows)} launches, {len(families)} families, {len({r['set'] for r in rows})} sets")
    print(f"collected rule (shipped until 2026-12-03): {summary([r['simulated'] / r['measured'] - 1 for r in rows])}")
    for name, terms in (ALL_MISSING_FORMS if "--all-missing" in sys.argv else FORMS).items():
        coef = fit(rows, terms)
        inside = [predict(r, coef, terms) / r["measured"] - 1 for r in rows]
        held = []
        for fam in families:
            c = fit([r for r in rows if r["family"] != fam], terms)
            held += [predict(r, c, terms) / r["measured"] - 1 for r in rows if r["family"] == fam]
        print(f"{name}: coefficients {[round(c, 3) for c in coef]}")
        print(f"    fitted on all: {summary(inside)}   held out by family: {summary(held)}")
        if "--per-family" in sys.argv:
            for fam in families:
                c = fit([r for r in rows if r["family"] != fam], terms)
                sel = [r for r in rows if r["family"] == fam]
                shipped = [r["simulated"] / r["measured"] - 1 for r in sel]
                out = [predict(r, c, terms) / r["measured"] - 1 for r in sel]
                print(f"      {fam:16} n {len(sel):3}  held out {summary(out)}   shipped {summary(shipped)}")


if __name__ == "__main__":
    main()
