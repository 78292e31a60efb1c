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


def beta_share(e, warps, slots, throughput, x):
    """`beta`: a share BETA of the turnover always, the rest as the throughput lost while a slot's
    warps are away."""
    rest = e["effective"] - warps / e["blocks"]
    x_rest = throughput(rest) if rest >= 1 else rest * throughput(1.0) if rest > 0 else 0.0
    return BETA[0] + (1 - BETA[0]) * min(slots * (1 - x_rest / x), 1.0)


SHIPPED_PREDICT = tf.predict


def predict(e, params, warps=None, pw="shipped"):
    """time_fit.predict with the variant's two changes (through its hooks)."""
    return SHIPPED_PREDICT(e, params, warps, pw, cuts={n: 0.5 for n in CONSTANT_SERVICE},
                           turnover_share=beta_share if BETA[0] < 1.0 else None)


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
