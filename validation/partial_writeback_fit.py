#!/usr/bin/env python3
"""Fits [partial_writeback] (hw-configs/h200.toml; docs/model.md, "Partly written sectors") over
validation reports, cross-validated by kernel family.

When many partly written sectors wait in the L2 at once, the L2 writes some back before their
other writers complete them (Nsight Compute counts DRAM reads the simulator does not, and about
as many writes more), the more so the longer they wait: chiefly those two blocks write between
them. The rule adds to the DRAM's time

    ramp(waiting) x (sectors two blocks write in part + weight x the others) / sectors_per_ns,

the ramp going from 0 at `onset` partly written sectors waiting at once (the report's
partial_sectors_waiting) to 1 at `saturation`. All four constants are fitted by grid search
through the time model's replica (validation/time_fit.py), by its objective over every launch of
the reports given (what ships), and again with each kernel family that leaves sectors partly
written held out (fitted without it, scored on it). Needs reports written since 2026-11-30 (they
carry the partly written sectors); older ones count as leaving none.

  validation/partial_writeback_fit.py REPORT.json ...   (e.g. docs/data/validation-h200*.json)
"""
import statistics, sys
import time_fit

ONSETS = [1e4, 2e4, 3e4, 4e4]
SPANS = [5e4, 1e5, 1.5e5, 2e5, 3e5]
RATES = [8.0, 10.0, 12.5, 16.0, 20.0, 25.0, 33.0]
WEIGHTS = [0.0, 0.1, 0.25, 0.5]


def fit(launches):
    """The (onset, saturation, sectors_per_ns, weight) of the least replica objective."""
    shipped = time_fit.SHIPPED
    # Launches leaving no sector partly written keep their times whatever the constants.
    fixed = [(e, time_fit.predict(e, shipped, pw=None)) for e in launches if not e["left_partial"]]
    affected = [e for e in launches if e["left_partial"]]

    def objective(pw):
        return time_fit.score_predicted(fixed + [(e, time_fit.predict(e, shipped, pw=pw)) for e in affected])[0]
    grid = [(o, o + span, r, w) for o in ONSETS for span in SPANS for r in RATES for w in WEIGHTS]
    return min(grid, key=objective)


def line(s):
    return f"median {s[1]*100:5.2f} %, p90 {s[2]*100:5.1f} %, worst pick {s[3]*100:5.1f} %, {s[4]} groups below 97 %"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    launches = [e for e in time_fit.load(args) if e["family"] != "histogram" and e["hw"] == "h200"]
    partial = [e for e in launches if e["left_partial"]]
    print(f"{len(launches)} H200 launches, {len(partial)} leaving sectors partly written, "
          f"families {sorted(set(e['family'] for e in partial))}")
    pw = fit(launches)
    for name, p in [("without", None), ("shipped", "shipped"), ("fitted", pw)]:
        s = time_fit.score(launches, time_fit.SHIPPED, pw=p)
        shown = time_fit.HW["h200"]["partial_writeback"] if p == "shipped" else p
        print(f"{name:8} {shown}: objective {s[0]:.4f}, {line(s)}")
    print("held out: fitted (onset, saturation, sectors_per_ns, weight) -> the family's time; without the rule")
    pooled, pooled0 = [], []
    for fam in sorted(set(e["family"] for e in partial)):
        train = [e for e in launches if e["family"] != fam]
        test = [e for e in launches if e["family"] == fam]
        p = fit(train)
        print(f"   {fam:16} ({len(test):3}) {p}: {line(time_fit.score(test, time_fit.SHIPPED, pw=p))}")
        print(f"   {'':16}       without: {line(time_fit.score(test, time_fit.SHIPPED, pw=None))}")
        pooled += [abs(time_fit.predict(e, time_fit.SHIPPED, pw=p) / e["measured"] - 1) for e in test]
        pooled0 += [abs(time_fit.predict(e, time_fit.SHIPPED, pw=None) / e["measured"] - 1) for e in test]
    for name, errs in [("held out", pooled), ("without", pooled0)]:
        errs.sort()
        print(f"pooled {name}: median {statistics.median(errs)*100:.2f} %, p90 {errs[int(0.9 * (len(errs) - 1))]*100:.1f} %")


if __name__ == "__main__":
    main()
