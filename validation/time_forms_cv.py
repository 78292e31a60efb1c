#!/usr/bin/env python3
"""Two forms of the time model tried against the shipped one, each family held out (issue 53;
docs/validation.md, "Two more forms, tried on 2026-12-02"; output of the 807 launches in
docs/data/time-fit-2026-12-02-variants.txt). Not shipped.

It runs validation/time_fit.py's replica of src/sim/queueing.rs with two changes:
- `pipes`: the mean-value analysis gives the SM's own stations (L1, FP, issue) a constant
  service time: an arrival waits for half the job in service, R = D (1 + Q - U/2), where the
  shipped (exponential) form has R = D (1 + Q); the L2 and the DRAM stay exponential;
- `beta`: the block turnover C turns / B^2 charged as (beta + (1 - beta) min(1, B (1 - X(N -
  N/B) / X(N)))): a share beta however busy the memory is, the rest as the throughput the
  queueing model loses while a slot's warps are away (X the MVA throughput, N the resident
  warps, B the blocks per SM); beta = 1 is the shipped rule.
Variants: old (the shipped form), pipes, beta, beta+pipes. Each refits loaded_latency_factor,
latency_per_load_factor, block_turnover_cycles and l1_busy_per_dram_time (and beta) on a grid,
on all launches and with each kernel family held out; the folds run in parallel.

    validation/time_forms_cv.py VARIANT[,VARIANT...] REPORT.json ...
    e.g. validation/time_forms_cv.py old,pipes,beta,beta+pipes $(ls docs/data/validation-h*.json | grep -v atomics)
    (about 110 CPU-minutes for the four; set PROCS, default all cores)
"""
import math
import multiprocessing
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import time_fit as tf  # noqa: E402

# Stations with a constant service time (`pipes`), and the share of the turnover always charged.
CONSTANT_SERVICE = set()
BETA = [1.0]
VARIANTS = {
    "old": (set(), (1.0,)),
    "pipes": ({"l1", "issue", "fp"}, (1.0,)),
    "beta": (set(), (0.2, 0.3, 0.5)),
    "beta+pipes": ({"l1", "issue", "fp"}, (0.2, 0.3, 0.5)),
}
GRID = [(a, b, c, 0.0, False, h) for a in (1.25, 1.5, 1.75) for b in (0.075, 0.1, 0.15)
        for c in (1000.0, 1500.0, 2000.0, 3000.0) for h in (0.15, 0.2, 0.25, 0.3)]


def mva(customers, delay, demands, names):
    """time_fit.mva with half the residual service taken off at the constant-service stations."""
    return tf.mva(customers, delay, demands, [0.5 if n in CONSTANT_SERVICE else 0.0 for n in names])


def predict(e, params, warps=None, pw="shipped"):
    """time_fit.predict with the two changes (the H200's and H100's reports: one DRAM rate or the
    config's rates by direction, as the reports were written)."""
    a, b, c, _, _, held = params
    h = tf.HW[e["hw"]]
    warps = warps or e["warps"]
    secs = dict(e["secs"])
    if h["by_direction"] and "dram" in secs:
        rd, wr, cp = h["by_direction"]
        r, w = e["reads"], e["writes"]
        turnaround = 1.0 / (2.0 / cp - 1.0 / rd - 1.0 / wr)
        secs["dram"] = r / (rd * 1e9) + w / (wr * 1e9) + min(r, w) / (turnaround * 1e9)
    if "dram" in secs:
        secs["dram"] += tf.partial_seconds(e, h["partial_writeback"] if pw == "shipped" else pw)
    if "l1" in secs:
        secs["l1"] += held * secs.get("dram", 0.0)
    names = list(secs)
    demands = [s * h["sms"] / warps * e["cps"] for s in secs.values()]
    delay = (a + b * e["loads"]) * h["latency"] * max(e["rounds"], 1.0)
    throughput = lambda n: mva(n, delay, demands, names)  # noqa: E731
    x = throughput(e["effective"])
    busy = warps / h["sms"] / x / e["cps"]
    slots = max(round(e["resident"] * e["blocks"] / warps), 1)
    turning = max(e["blocks"] / h["sms"] - slots, 0.0) if e["block_warps"] > 1 else 0.0
    share = 1.0
    if BETA[0] < 1.0:
        rest = e["effective"] - warps / e["blocks"]
        x_rest = throughput(rest) if rest >= 1 else rest * throughput(1.0) if rest > 0 else 0.0
        share = BETA[0] + (1 - BETA[0]) * min(slots * (1 - x_rest / x), 1.0)
    turnover = c * turning / slots ** 2 * share / e["cps"]
    waves = e["blocks"] / h["sms"] / slots
    part = waves - math.floor(waves)
    last = 0.0
    if waves > 1.0 and part > 0.0:
        wl = part * slots * warps / e["blocks"]
        n = max(wl, 1.0)
        last = max(n / throughput(n) - wl / x, 0.0)
    return busy + last / e["cps"] + turnover + h["overhead_us"] * 1e-6


tf.predict = predict
LAUNCHES = []


def refit(launches, betas):
    best = None
    for beta in betas:
        BETA[0] = beta
        for p in GRID:
            s = tf.score(launches, p)[0]
            if best is None or s < best[0]:
                best = (s, beta, p)
    return best[1], best[2]


def fold(job):
    name, held_out = job
    CONSTANT_SERVICE.clear()
    CONSTANT_SERVICE.update(VARIANTS[name][0])
    train = [e for e in LAUNCHES if e["family"] != held_out]
    test = LAUNCHES if held_out is None else [e for e in LAUNCHES if e["family"] == held_out]
    beta, p = refit(train, VARIANTS[name][1])
    BETA[0] = beta
    return name, held_out, beta, p, [abs(tf.predict(e, p) / e["measured"] - 1) for e in test], tf.score(test, p)


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    names = sys.argv[1].split(",")
    LAUNCHES.extend(tf.load(sys.argv[2:]))
    families = sorted({e["family"] for e in LAUNCHES})
    jobs = [(n, None) for n in names] + [(n, f) for n in names for f in families]
    with multiprocessing.Pool(int(os.environ.get("PROCS", os.cpu_count()))) as pool:
        results = pool.map(fold, jobs, chunksize=1)
    for n in names:
        _, _, beta, p, _, s = next(r for r in results if r[0] == n and r[1] is None)
        print(f"== {n}: all families fitted: beta {beta} {p} median {s[1]*100:.2f} % p90 {s[2]*100:.1f} % "
              f"worst pick {s[3]*100:.1f} % below97 {s[4]}")
        pooled = []
        for _, fam, beta, p, errs, s in (r for r in results if r[0] == n and r[1] is not None):
            pooled += errs
            print(f"   {fam:16} ({len(errs):3}) beta {beta} {p}: median {s[1]*100:5.1f} % p90 {s[2]*100:5.1f} % "
                  f"worst pick {s[3]*100:5.1f} %")
        pooled.sort()
        print(f"   pooled held-out median {statistics.median(pooled)*100:.2f} %, "
              f"p90 {pooled[int(0.9 * (len(pooled) - 1))]*100:.1f} %")


if __name__ == "__main__":
    main()
