#!/usr/bin/env python3
"""Fit the per-warp form of the L1 data stage's load replays across every measured group, with
leave-one-family-out, and compare it with the shipped rule (issue 53; docs/model.md "Coalescer
and L1", data stage; docs/validation.md "DRAM writes, L1 wavefronts, time").

The shipped rule (src/sim/data_stage.rs `extra_wavefronts`):
    fixed + (0.244 x missing request lines + 1 x partial lines) x min(1, loads per block / K)
The per-warp form that validation/wavefront_replay_summary.py fitted on the H200 benchmark alone:
    fixed + c x warps x (load requests per warp)^a x (sectors per request / 4)^b
          x min(1, warps per block / k)
(the benchmark's loads are 1 line of 4 sectors (floats) or 2 of 8 (doubles), so lines and
sectors / 4 are the same there; sectors are what the counters and the simulation give for every
launch, lines are not reported).

Data, one row per measured launch:
- the 425 launches of docs/data/wavefront-terms.csv (`fixed`, `replays`, loads per block; see
  validation/wavefront_families_fit.py), joined on the measured wavefronts with the reports in
  docs/data (load requests and sectors, the block shape, the time model's figures);
- the H200 benchmark, tests/data/h200/wavefront_replay/ (`streams` and `batch`, 224 launches;
  fixed = bank rule x requests + the 2 blockIdx passes per warp, replays = 0.244 x missing lines
  as measured), as one more family, `replay-bench`.
Warps launched = blocks x warps per block, blocks = load requests / loads per block.

A third form keeps the shipped replays of the missing lines and scales them by what the
benchmark says the extra follows (warps per block, falling with the loads per warp):
    fixed + s x replays x min(1, loads per block / K) x min(1, warps per block / k)^e
          x (load requests per warp)^-d

Fitting: the exponents and knees on grids, the factor (c, s) by least squares of the relative
error; each family is predicted with the constants fitted on the others. Printed per group and
per family: median and worst error of the shipped rule (as shipped, K = 8), and of the other
forms held out (and the per-warp form fitted on all); `--worst` lists the launches the per-warp
form fitted on all misses most.

    python3 validation/wavefront_perwarp_fit.py [--no-bench]
"""
import csv
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import wavefront_replay_summary as bench  # noqa: E402

WF = "l1tex__data_pipe_lsu_wavefronts.sum"
REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REPORTS = {
    "h200": "validation-h200",
    "families": "validation-h200-families",
    "zloop-fewblocks": "validation-h200-zloop-fewblocks",
    "h200-shared-transpose": "validation-h200-transpose",
    "h100": "validation-h100",
    "h100-timing": "validation-h100-timing",
    "h100-edges": "validation-h100-edges",
    "h100-narrow": "validation-h100-narrow",
    "h100-pitch": "validation-h100-pitch",
    "h100-new-kernels": "validation-h100-new-kernels",
}
SHIPPED_K = 8.0


def kernel_rows():
    out = []
    reports = {}
    for s, f in REPORTS.items():
        d = json.load(open(os.path.join(ROOT, "docs", "data", f + ".json")))
        reports[s] = {r["metrics"][WF]["measured"]: r for r in d["rows"] if WF in r["metrics"]}
    for r in csv.DictReader(open(os.path.join(ROOT, "docs", "data", "wavefront-terms.csv"))):
        rep = reports[r["set"]][float(r["measured"])]
        req = rep["metrics"][REQ]["measured"]
        lpb = float(r["load_instructions_per_block"])
        bx, by, bz = rep["block"]
        wpb = -(-bx * by * bz // 32)
        blocks = round(req / lpb)
        out.append(dict(set=r["set"], family=r["family"], launch=r["launch"], group=rep["group"],
                        measured=float(r["measured"]), fixed=float(r["fixed"]),
                        replays=float(r["replays"]), lpb=lpb, wpb=wpb, warps=blocks * wpb,
                        req=req, sec=rep["metrics"][SEC]["measured"],
                        simulated=rep["metrics"][WF]["simulated"], time=rep.get("time")))
    return out


def bench_rows():
    l1 = bench.hw_l1()
    d = os.path.join(ROOT, "tests", "data", "h200", "wavefront_replay")
    runs = bench.load_run(f"{d}/ncu.csv", f"{d}/launches.txt", "first")
    batch = bench.load_run(f"{d}/ncu_batch.csv", f"{d}/launches_batch.txt", "batch")
    out = []
    for r in [r for r in runs if r["kernel"] == "streams"] + batch:
        bench.derive(r, l1)
        out.append(dict(set="replay-" + r["kernel"], family="replay-bench", launch=r["line"],
                        group=None, measured=r[bench.WF],
                        fixed=r["bank"] * r[bench.REQ] + r[bench.WF_SHARED],
                        replays=l1["miss"] * r["miss_lines"], lpb=r["loads_per_block"],
                        wpb=r["wpb"], warps=r[bench.WARPS], req=r[bench.REQ], sec=r[bench.SEC],
                        simulated=None, time=None))
    return out


def shipped(r, p):
    (k,) = p
    return r["fixed"] + r["replays"] * min(1.0, r["lpb"] / k)


def per_warp_term(r, a, b, k):
    rw = r["req"] / r["warps"]
    spr = r["sec"] / r["req"] / 4
    return r["warps"] * rw ** a * spr ** b * min(1.0, r["wpb"] / k)


def per_warp(r, p):
    c, a, b, k = p
    return r["fixed"] + c * per_warp_term(r, a, b, k)


def scaled_term(r, big_k, k, d, e):
    rw = r["req"] / r["warps"]
    return r["replays"] * min(1.0, r["lpb"] / big_k) * min(1.0, r["wpb"] / k) ** e * rw ** -d


def scaled(r, p):
    s, big_k, k, d, e = p
    return r["fixed"] + s * scaled_term(r, big_k, k, d, e)


def err(pred, r):
    return pred / r["measured"] - 1


def lsq_c(rows, base, term):
    """c minimising sum((base + c term) / measured - 1)^2."""
    num = den = 0.0
    for r in rows:
        x = term(r) / r["measured"]
        y = 1 - base(r) / r["measured"]
        num += x * y
        den += x * x
    return max(0.0, num / den) if den else 0.0


def fit_shipped(rows):
    best = None
    for k in (1, 2, 4, 6, 8, 12, 16, 1e9):
        sse = sum(err(shipped(r, (k,)), r) ** 2 for r in rows)
        if best is None or sse < best[0]:
            best = (sse, (k,))
    return best[1]


A_GRID = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
B_GRID = (0.0, 0.5, 1.0)
K_GRID = (1, 2, 4, 8)


def fit_per_warp(rows):
    best = None
    for a in A_GRID:
        for b in B_GRID:
            for k in K_GRID:
                c = lsq_c(rows, lambda r: r["fixed"], lambda r: per_warp_term(r, a, b, k))
                sse = sum(err(per_warp(r, (c, a, b, k)), r) ** 2 for r in rows)
                if best is None or sse < best[0]:
                    best = (sse, (c, a, b, k))
    return best[1]


def fit_scaled(rows):
    best = None
    for big_k in (1, 4, 8, 12, 16):
        for k in K_GRID:
            for e in (0.0, 0.5, 1.0):
                for d in (0.0, 0.2, 0.4, 0.6):
                    s = lsq_c(rows, lambda r: r["fixed"],
                              lambda r: scaled_term(r, big_k, k, d, e))
                    sse = sum(err(scaled(r, (s, big_k, k, d, e)), r) ** 2 for r in rows)
                    if best is None or sse < best[0]:
                        best = (sse, (s, big_k, k, d, e))
    return best[1]


def stats(es):
    a = [abs(e) for e in es]
    if not a:
        return "          -          "
    w = max(es, key=abs)
    return f"{100 * statistics.median(a):5.1f}% / {100 * w:+6.1f}%"


def main():
    rows = kernel_rows()
    if "--no-bench" not in sys.argv:
        rows += bench_rows()
    fams = sorted({r["family"] for r in rows})
    models = {"shipped": (shipped, fit_shipped), "per-warp": (per_warp, fit_per_warp),
              "scaled": (scaled, fit_scaled)}
    fitted = {m: f(rows) for m, (_, f) in models.items()}
    held = {m: {} for m in models}
    print(f"{len(rows)} launches; fitted on all: shipped K = {fitted['shipped'][0]:g}; per-warp "
          "c = {:.3f}, a = {}, b = {}, k = {}; ".format(*fitted["per-warp"])
          + "scaled s = {:.3f}, K = {}, k = {}, d = {}, e = {}".format(*fitted["scaled"]))
    print("leave one family out (constants fitted on the others):")
    for fam in fams:
        train = [r for r in rows if r["family"] != fam]
        line = f"  {fam:13} n {sum(r['family'] == fam for r in rows):3}"
        for m, (pred, fit) in models.items():
            p = fit(train)
            for r in rows:
                if r["family"] == fam:
                    held[m][id(r)] = err(pred(r, p), r)
            line += f"  {m} {' '.join(f'{x:.3g}' for x in p)}"
        print(line)
    sets = sorted({r["set"] for r in rows})
    print("\nper group: median |error| / worst; shipped as shipped (K = 8) | per-warp held out | "
          "per-warp fitted on all | scaled held out")
    for s in sets + ["all"]:
        sel = [r for r in rows if s in ("all", r["set"])]
        print(f"  {s:22} n {len(sel):3}  {stats([err(shipped(r, (SHIPPED_K,)), r) for r in sel])} | "
              f"{stats([held['per-warp'][id(r)] for r in sel])} | "
              f"{stats([err(per_warp(r, fitted['per-warp']), r) for r in sel])} | "
              f"{stats([held['scaled'][id(r)] for r in sel])}")
    print("\nper family: shipped (K = 8) | shipped held out | per-warp held out | scaled held out")
    for fam in fams:
        sel = [r for r in rows if r["family"] == fam]
        print(f"  {fam:13} n {len(sel):3}  {stats([err(shipped(r, (SHIPPED_K,)), r) for r in sel])} | "
              f"{stats([held['shipped'][id(r)] for r in sel])} | "
              f"{stats([held['per-warp'][id(r)] for r in sel])} | "
              f"{stats([held['scaled'][id(r)] for r in sel])}")
    if "--worst" in sys.argv:
        p = fitted["per-warp"]
        print("\nworst launches, per-warp fitted on all (error, shipped error):")
        for r in sorted(rows, key=lambda r: -abs(err(per_warp(r, p), r)))[:25]:
            print(f"  {r['set']:18} {r['launch']:45} {100 * err(per_warp(r, p), r):+6.1f}% "
                  f"{100 * err(shipped(r, (SHIPPED_K,)), r):+6.1f}%  wpb {r['wpb']:2} "
                  f"req/w {r['req'] / r['warps']:5.2f} sec/req {r['sec'] / r['req']:5.2f}")


if __name__ == "__main__":
    main()
