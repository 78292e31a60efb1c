#!/usr/bin/env python3
"""Fit `[l1] missing_request_line_wavefronts` (docs/model.md "Coalescer and L1", data stage).

The simulated wavefronts are linear in the constant m: W(m) = W(0) + m * lines, where lines are the
lines of load instructions that miss. Two `gputraffic validate --format json` reports of the same
launches, one at the shipped m and one with m = 0 in the config, give W(0) and lines per launch.
The fit minimises the median |error| of W(m) against the measured
`l1tex__data_pipe_lsu_wavefronts.sum` over the fit launches (by default the star1, star4 and copy
launches of the first pair), on a grid of 0.001, and is cross-validated by kernel; every pair is
then scored at the shipped and the fitted m.

    python3 validation/wavefront_fit.py M SHIPPED.json ZERO.json [SHIPPED2.json ZERO2.json ...]
"""
import json
import statistics
import sys

WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts.sum"
FIT_KERNELS = ("star1", "star4", "copy")


def launches(shipped, zero, m):
    a, b = json.load(open(shipped)), json.load(open(zero))
    out = []
    for x, y in zip(a["rows"], b["rows"]):
        if (x["launch"], x.get("set")) != (y["launch"], y.get("set")):
            sys.exit(f"{shipped} and {zero} do not list the same launches in the same order")
        w = x["metrics"].get(WAVEFRONTS)
        if not w or not w["measured"]:
            continue
        w0 = y["metrics"][WAVEFRONTS]["simulated"]
        out.append(dict(kernel=x["kernel"], measured=w["measured"], w0=w0, lines=(w["simulated"] - w0) / m))
    return out


def errors(rows, m):
    return [abs((r["w0"] + m * r["lines"]) / r["measured"] - 1) for r in rows]


def fit(rows):
    grid = [i / 1000 for i in range(0, 1001)]
    return min(grid, key=lambda m: (statistics.median(errors(rows, m)), m))


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        sys.exit(__doc__)
    shipped_m = float(sys.argv[1])
    pairs = [(sys.argv[i], sys.argv[i + 1]) for i in range(2, len(sys.argv), 2)]
    sets = [launches(s, z, shipped_m) for s, z in pairs]
    train = [r for r in sets[0] if r["kernel"] in FIT_KERNELS]
    m = fit(train)
    print(f"fitted on {len(train)} launches of {pairs[0][0]}: m = {m:.3f} (shipped {shipped_m})")
    for k in FIT_KERNELS:
        rest = [r for r in train if r["kernel"] != k]
        held = [r for r in train if r["kernel"] == k]
        mk = fit(rest)
        e = errors(held, mk)
        print(f"  {k} held out: m = {mk:.3f}, held-out median {100 * statistics.median(e):.1f}%, "
              f"worst {100 * max(e):.1f}%")
    for (s, _), rows in zip(pairs, sets):
        print(f"{s}: median |error| {100 * statistics.median(errors(rows, shipped_m)):.2f}% at the shipped m, "
              f"{100 * statistics.median(errors(rows, m)):.2f}% at {m:.3f}")
        for k in sorted({r["kernel"] for r in rows}):
            sel = [r for r in rows if r["kernel"] == k]
            a, b = errors(sel, shipped_m), errors(sel, m)
            print(f"  {k:12} n {len(sel):3}  median {100 * statistics.median(a):5.1f}% -> "
                  f"{100 * statistics.median(b):5.1f}%  worst {100 * max(a):5.1f}% -> {100 * max(b):5.1f}%")


if __name__ == "__main__":
    main()
