#!/usr/bin/env python3
"""Tries a round's delay lengthened by the DRAM's traffic, reads and writes apart (issue 53,
item 3; docs/validation.md "A load's latency under load"), through validation/time_fit.py's
replica of the time model, cross-validated by kernel family.

The measurement (tests/data/h200/loaded_latency/): a lone load waits the idle DRAM latency;
streams that read lengthen it little until they near the read rate, streams that write lengthen
it early and far (a copy at 3.0 TB/s: +95 %; writes at 3.5 TB/s: 4.5-5.2 idle latencies). The
form tried: the shipped delay (a + b * loads) * latency * rounds times

    1 + kw * Uw + kr * Ur ** 4

with Uw, Ur the DRAM's write and read time (bytes over the config's rate by direction, or the
one DRAM time split by bytes where a config has one rate) over the launch's predicted time,
found as a fixed point (the time depends on the delay, the utilisation on the time). kw = kr =
0 is the shipped model. Each grid point is scored over every launch; then each family is
predicted with the point that scores best on the others (the objective of time_fit.py).

    validation/loaded_delay_cv.py docs/data/validation-h*.json
"""
import itertools
import sys

import time_fit as tf

A = (0.75, 1.0, 1.25)
B = (0.05, 0.1, 0.15)
KW = (0.0, 0.5, 1.0, 2.0, 3.0)
KR = (0.0, 1.0, 2.0)
C = (1000.0, 1500.0)
HELD = (0.2,)


def dram_split(e):
    """The DRAM's read and write seconds at its byte rates (without the partly written
    sectors' extra, which the replica adds to the DRAM's station)."""
    h = tf.HW[e["hw"]]
    r, w = e["reads"], e["writes"]
    if h["by_direction"]:
        rd, wr, _ = h["by_direction"]
        return r / (rd * 1e9), w / (wr * 1e9)
    total = e["secs"].get("dram", 0.0)
    share = r / (r + w) if r + w else 0.0
    return total * share, total * (1.0 - share)


def predict(e, point, iterations=6):
    """The replica's time of launch `e` with the delay lengthened at grid `point` =
    (a, b, kw, kr, C, held)."""
    a, b, kw, kr, c, held = point
    base = (a, b, c, 0.0, False, held)
    t = tf.predict(e, base)
    if kw == 0.0 and kr == 0.0:
        return t
    read_s, write_s = dram_split(e)
    rounds = max(e["rounds"], 1.0)
    for _ in range(iterations):
        uw, ur = min(write_s / t, 1.0), min(read_s / t, 1.0)
        factor = 1.0 + kw * uw + kr * ur ** 4
        t_new = tf.predict(dict(e, rounds=rounds * factor), base)
        if abs(t_new - t) < 1e-4 * t:
            t = t_new
            break
        t = 0.5 * (t + t_new)
    return t


def main():
    paths = [a for a in sys.argv[1:] if not a.startswith("--")]
    launches = tf.load(paths)
    grid = list(itertools.product(A, B, KW, KR, C, HELD))
    print(f"{len(launches)} launches, {len(set(e['family'] for e in launches))} families, {len(grid)} grid points")
    predicted = {p: {id(e): predict(e, p) for e in launches} for p in grid}
    score_at = lambda sub, p: tf.score_predicted([(e, predicted[p][id(e)]) for e in sub])  # noqa: E731
    shipped = (1.25, 0.15, 0.0, 0.0, 1500.0, 0.2)
    ranked = sorted(grid, key=lambda p: score_at(launches, p)[0])
    for p in [shipped] + ranked[:8]:
        s = score_at(launches, p)
        print(f"(a, b, kw, kr, C, h) = {p}: objective {s[0]:.4f}, median {s[1]*100:.2f} %, p90 {s[2]*100:.1f} %, "
              f"worst pick {s[3]*100:.1f} %, {s[4]} groups below 97 %")
    best = ranked[0]
    for name in sorted(set(e["set"] for e in launches)):
        sub = [e for e in launches if e["set"] == name]
        s, s0 = score_at(sub, best), score_at(sub, shipped)
        print(f"   {name:38} {len(sub):4}  median {s[1]*100:5.1f} % (shipped {s0[1]*100:5.1f} %)  "
              f"p90 {s[2]*100:5.1f} % ({s0[2]*100:5.1f} %)  worst pick {s[3]*100:5.1f} % ({s0[3]*100:5.1f} %)")
    # Held out: the whole form (kw, kr free) against the shipped form (kw = kr = 0) refitted the
    # same way, so that what the form adds is told from what a refit of a, b and C adds.
    shipped_form = [p for p in grid if p[2] == 0.0 and p[3] == 0.0]
    for label, points in (("lengthened delay", grid), ("shipped form refitted", shipped_form)):
        print(f"held out by family, {label}: fitted (a, b, kw, kr, C, h) -> held-out median, p90, worst pick")
        tf.held_out_by_family(launches, points, predicted, "(a, b, kw, kr, C, h) =", baseline=(shipped, "shipped"))

if __name__ == "__main__":
    main()
