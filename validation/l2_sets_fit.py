#!/usr/bin/env python3
"""What the eviction curves of validation/l2_sets.cu say about the L2's replacement (standard library):

    l2_sets_fit.py DIR        (DIR holds l2_sets_curve.csv, l2_sets_reuse.csv and/or l2_sets_clean.csv)

A trial evicted its target T when the last read of T took more than 70 cycles over the median hit.
Prints, from l2_sets_reuse.csv, the share of trials that evicted T per pool size for T read 1, 2
and 4 times (a policy that promotes lines on a hit lets the reused T outlive more of the pool),
then the likelihood of all trials (both files) under two models of one side of the L2:
  - recency (LRU or tree-PLRU) in S sets of W ways, the pool's N lines spread at random over the
    sets: T is evicted when its set receives at least W of them, P = P(Poisson(N W / C) >= W),
    C = S W the capacity in lines (fitted per W);
  - random replacement: P = 1 - exp(-N / C) whatever W.
With l2_sets_clean.csv, the same fit once more for each flush of that file (one that leaves the
sets full of dirty lines, one that leaves them clean), from its `evicted` column.
"""
import collections
import csv
import math
import os
import sys


def trials(path, pool_kind=None):
    rows = list(csv.DictReader(open(path)))
    if pool_kind:
        hits = [int(r["cycles"]) for r in rows if r["kind"] == "reread"]
        rows = [r for r in rows if r["kind"] == pool_kind]
    else:
        hits = [int(r["cycles"]) for r in rows if r["pool_lines"] == "0"]
        rows = [r for r in rows if r["pool_lines"] != "0"]
    hit = sorted(hits)[len(hits) // 2]
    return [(r, int(r["cycles"]) > hit + 70) for r in rows]


def poisson_at_least(lam, w):
    p = term = math.exp(-lam)
    for k in range(1, w):
        term *= lam / k
        p += term
    return 1 - p


def loglik(obs, prob):
    s = 0.0
    for n, (ev, tot) in obs.items():
        p = min(max(prob(n), 1e-12), 1 - 1e-12)
        s += ev * math.log(p) + (tot - ev) * math.log(1 - p)
    return s


def main(d):
    obs = collections.defaultdict(lambda: [0, 0])
    reuse = os.path.join(d, "l2_sets_reuse.csv")
    if os.path.exists(reuse):
        t = trials(reuse)
        table = collections.defaultdict(lambda: [0, 0])
        for r, ev in t:
            table[(int(r["reads"]), int(r["pool_lines"]))][0] += ev
            table[(int(r["reads"]), int(r["pool_lines"]))][1] += 1
            obs[int(r["pool_lines"])][0] += ev
            obs[int(r["pool_lines"])][1] += 1
        sizes = sorted({n for _, n in table})
        print("T evicted (share of trials) | " + " | ".join("%d lines" % n for n in sizes))
        for reads in sorted({k for k, _ in table}):
            cells = [table[(reads, n)] for n in sizes]
            print("T read %d time(s) | " % reads + " | ".join("%.2f (%d)" % (e / t, t) for e, t in cells))
    curve = os.path.join(d, "l2_sets_curve.csv")
    if os.path.exists(curve):
        for r, ev in trials(curve, "pool"):
            obs[int(r["pool_lines"])][0] += ev
            obs[int(r["pool_lines"])][1] += 1
    if obs:
        fit(obs, "curve and reuse")
    clean = os.path.join(d, "l2_sets_clean.csv")
    if os.path.exists(clean):
        rows = list(csv.DictReader(open(clean)))
        for flush in ("write", "read"):
            obs = collections.defaultdict(lambda: [0, 0])
            for r in rows:
                if r["flush"] == flush and r["pool_lines"] != "0":
                    obs[int(r["pool_lines"])][0] += int(r["evicted"])
                    obs[int(r["pool_lines"])][1] += 1
            sizes = sorted(obs)
            print("flush that %ss: T evicted | " % flush + " | ".join(
                "%.1f MiB %.2f" % (n * 128 / 2**20, obs[n][0] / obs[n][1]) for n in sizes))
            fit(obs, "after the flush that %ss" % flush)


def fit(obs, label):
    caps = range(60000, 400001, 2000)
    print("%s: model | capacity (lines) | log-likelihood (%d trials)" % (label, sum(t for _, t in obs.values())))
    for w in (4, 8, 12, 16, 24, 32, 64):
        ll, c = max((loglik(obs, lambda n: poisson_at_least(n * w / c, w)), c) for c in caps)
        print("recency, %d ways | %d | %.1f" % (w, c, ll))
    ll, c = max((loglik(obs, lambda n: 1 - math.exp(-n / c)), c) for c in caps)
    print("random | %d | %.1f" % (c, ll))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
