#!/usr/bin/env python3
"""In-flight hits and the L1's replay wavefronts (issue 53; docs/model.md "Coalescer and L1", data
stage, "In-flight hits"). The study that led to the rule shipped since 2026-12-03, which counts
the hits in flight per line (wavefront_stores_fit.py fits it); kept for its window sweep.

The rule its reports were simulated with charges `missing_request_line_wavefronts` (0.244) per line of each load
instruction that misses in the L1, plus one per partly present line, times min(1, load
instructions per block / 8). The question here: do the GPU's extra passes follow the lines of
loads that miss *or hit a line whose fill is still in flight* (a hit within W ticks of the miss
that brought the line in, on the same SM)?

    collect CSV REPORT.json:LOG.jsonl:SET ...
        Joins the per-launch counts an instrumented build logs (validation/wavefront_pending.patch,
        applied to the commit it names: `GT_EXP_PENDING=LOG.jsonl gputraffic validate ... --out
        REPORT.json`) with that report's measured and simulated wavefronts, into CSV (one row
        per exact launch; sampled ones are left out).
    fit CSV
        Prints, per kernel family and over all, the median and worst |error| of the collected rule
        and of the replay term with the in-flight hits counted (W = 16 ... 512 ticks), in sample
        and with each family predicted from a fit on the others (the coefficients by least
        squares on the relative error, the block scaling's K from a grid, as
        validation/wavefront_families_fit.py does).

The CSV's columns: set, launch, family, measured and simulated wavefronts, fixed (the simulated
wavefronts less the collected rule's replays: what no fitted constant touches), miss_request_lines,
partial_lines, in_flight_W (lines of load instructions that miss nothing and hit a line filled
fewer than W ticks before, for each W), warps (launched), warps_per_block, load_requests,
blocks.
"""
import csv
import json
import statistics
import sys

WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts.sum"
WINDOWS = (16, 32, 64, 128, 256, 512)
# The replay rule of the reports both CSVs (this one and wavefront_stores_fit.py's) were collected
# from, 2026-11-30 to 2026-12-02: their `fixed` is the simulated wavefronts less this rule's
# replays. It was shipped until 2026-12-03, when the in-flight hits joined it (fitted by
# wavefront_stores_fit.py; hw-configs/h200.toml holds the rule shipped now).
COLLECTED_MISS, COLLECTED_PARTIAL, COLLECTED_K = 0.244, 1.0, 8.0
FAMILIES = ("star1-zloop", "star1", "star4", "box27", "copy", "jacobi2d", "transpose", "lbm",
            "scale", "triad")


def family(kernel):
    name = kernel.split(":")[-1].replace("_", "-")
    for f in FAMILIES:
        if name.startswith(f):
            return f
    return name


def in_flight(hist, window):
    """Lines of fully hitting loads whose youngest line was filled fewer than `window` ticks
    before: the log's histogram has bucket 0 for a gap of 0, k for [2^(k-1), 2^k), the last for
    lines never filled on that SM."""
    return sum(h for k, h in enumerate(hist[:-1]) if (1 if k == 0 else 2 ** k) <= window)


def collect(out, specs):
    rows = []
    for spec in specs:
        report, log, set_name = spec.split(":")
        logged = {}
        for line in open(log):
            j = json.loads(line)
            if not j["sampled"]:
                logged.setdefault((j["kernel"], tuple(j["block"])), []).append(j)
        for r in json.load(open(report))["rows"]:
            m = r["metrics"].get(WAVEFRONTS)
            if not m or m.get("measured") is None:
                continue
            want = {k: str(v) for k, v in (r.get("set") or {}).items()}
            if r.get("domain"):
                want.update(zip(("nx", "ny", "nz"), map(str, r["domain"])))

            def matches(j):
                p = dict(kv.split("=") for kv in j["params"].split())
                return all(p.get(k) == v for k, v in want.items() if k in p)

            found = [j for j in logged.get((r["kernel"].split(":")[-1], tuple(r["block"])), [])
                     if matches(j)]
            # A launch the log cannot tell apart from another (or did not simulate exactly) is
            # left out; the sets collected on 2026-11-30 have none.
            if len(found) != 1:
                continue
            j = found[0]
            b = j["block"]
            wpb = (b[0] * b[1] * b[2] + 31) // 32
            blocks = j["warps"] / wpb
            lpb = j["load_requests"] / blocks
            shipped = (COLLECTED_MISS * j["miss_request_lines"] + COLLECTED_PARTIAL * j["partial_lines"]) \
                * min(1.0, lpb / COLLECTED_K)
            row = {
                "set": set_name, "launch": r["launch"], "family": family(r["kernel"]),
                "measured": m["measured"], "simulated": m["simulated"],
                "fixed": round(m["simulated"] - shipped, 1),
                "miss_request_lines": j["miss_request_lines"], "partial_lines": j["partial_lines"],
            }
            for w in WINDOWS:
                row[f"in_flight_{w}"] = in_flight(j["hit_hist"], w)
            row.update(warps=j["warps"], warps_per_block=wpb, load_requests=j["load_requests"],
                       blocks=int(blocks))
            rows.append(row)
    write_csv(rows, out)


def write_csv(rows, out):
    """Writes per-launch `rows` (dicts of one shape) to `out` as CSV (also for
    wavefront_stores_fit.py)."""
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} launches written to {out}")


def load(path):
    # The histogram's contended atomics are left out, as in wavefront_families_fit.py.
    rows = [r for r in csv.DictReader(open(path)) if r["family"] != "histogram"]
    for r in rows:
        for k, v in r.items():
            if k not in ("set", "launch", "family"):
                r[k] = float(v)
        r["lpb"] = r["load_requests"] / r["blocks"]
    return rows


def predict(r, window, miss, in_flight_cost, k):
    lines = miss * r["miss_request_lines"] + COLLECTED_PARTIAL * r["partial_lines"]
    if window:
        lines += in_flight_cost * r[f"in_flight_{window}"]
    return r["fixed"] + lines * min(1.0, r["lpb"] / k)


def errors(rows, *rule):
    return [predict(r, *rule) / r["measured"] - 1 for r in rows]


def fit(rows, window, tied):
    """Least squares of the relative error in the miss cost (and the in-flight cost, the same
    when `tied`), the block scaling's K from a grid."""
    best = None
    for k in (4, 6, 8, 12, 16):
        sums = [[0.0] * 3 for _ in range(2)]  # normal equations of (miss, in flight) -> y
        for r in rows:
            s = min(1.0, r["lpb"] / k) / r["measured"]
            x = [r["miss_request_lines"] * s, (r[f"in_flight_{window}"] if window else 0) * s]
            if tied:
                x = [x[0] + x[1], 0.0]
            y = (r["measured"] - r["fixed"]) / r["measured"] - COLLECTED_PARTIAL * r["partial_lines"] * s
            for i in range(2):
                sums[i][0] += x[i] * x[0]
                sums[i][1] += x[i] * x[1]
                sums[i][2] += x[i] * y
        if tied or not window:
            a = sums[0][2] / sums[0][0]
            b = a if tied else 0.0
        else:
            det = sums[0][0] * sums[1][1] - sums[0][1] * sums[1][0]
            a = (sums[0][2] * sums[1][1] - sums[0][1] * sums[1][2]) / det
            b = (sums[0][0] * sums[1][2] - sums[1][0] * sums[0][2]) / det
        sse = sum(e * e for e in errors(rows, window, a, b, k))
        if best is None or sse < best[0]:
            best = (sse, a, b, k)
    return best[1:]


def summary(errs, rows):
    out = f"{statistics.median(abs(e) for e in errs) * 100:5.2f} % / {max(errs, key=abs) * 100:+6.1f} %"
    fams = sorted({r["family"] for r in rows})
    for f in fams:
        e = [x for x, r in zip(errs, rows) if r["family"] == f]
        out += f" | {f} {statistics.median(abs(x) for x in e) * 100:.1f}/{max(e, key=abs) * 100:+.0f}"
    return out


def per_warp(r, window, alpha, k, beta):
    """The per-warp form's charge before its constant: warps x (lines per warp that miss or hit
    in flight)^alpha x min(1, warps per block / k)^beta (docs/model.md, "The per-warp form")."""
    lines = (r["miss_request_lines"] + r[f"in_flight_{window}"]) / r["warps"]
    return r["warps"] * lines ** alpha * min(1.0, r["warps_per_block"] / k) ** beta


def per_warp_fit(rows, window):
    """The constant by least squares of the relative error, alpha, k and beta from a grid; the
    partly present lines at one pass each, scaled alike."""
    best = None
    for alpha in (0.4, 0.5, 0.6, 0.7, 0.8, 1.0):
        for k in (2, 4, 8, 16):
            for beta in (0.5, 1.0, 1.5, 2.0):
                base = [r["fixed"] + r["partial_lines"] * min(1.0, r["warps_per_block"] / k) ** beta
                        for r in rows]
                xs = [per_warp(r, window, alpha, k, beta) / r["measured"] for r in rows]
                ys = [(r["measured"] - b) / r["measured"] for r, b in zip(rows, base)]
                c = sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)
                sse = sum((c * x - y) ** 2 for x, y in zip(xs, ys))
                if best is None or sse < best[0]:
                    best = (sse, c, alpha, k, beta)
    return best[1:]


def per_warp_errors(rows, window, c, alpha, k, beta):
    return [(r["fixed"] + r["partial_lines"] * min(1.0, r["warps_per_block"] / k) ** beta
             + c * per_warp(r, window, alpha, k, beta)) / r["measured"] - 1 for r in rows]


def main_fit(path):
    rows = load(path)
    fams = sorted({r["family"] for r in rows})
    print(f"{len(rows)} launches; median / worst |error|, then per family")
    print(f"{f'collected rule ({COLLECTED_MISS}, K = {COLLECTED_K:g})':44s} {summary(errors(rows, 0, COLLECTED_MISS, 0, COLLECTED_K), rows)}")
    for window in (0,) + WINDOWS:
        for tied in ((True,) if not window else (True, False)):
            a, b, k = fit(rows, window, tied)
            held = [0.0] * len(rows)
            for f in fams:
                train = [r for r in rows if r["family"] != f]
                ra, rb, rk = fit(train, window, tied)
                for i, r in enumerate(rows):
                    if r["family"] == f:
                        held[i] = predict(r, window, ra, rb, rk) / r["measured"] - 1
            label = f"W {window:3d} {'tied' if tied else 'free'} a {a:.3f} b {b:.3f} K {k:g}"
            print(f"{label:44s} {summary(errors(rows, window, a, b, k), rows)}")
            print(f"{'   each family held out':44s} {summary(held, rows)}")
    # The per-warp form, transpose left out (its extra comes with its scattered stores).
    rows = [r for r in rows if r["family"] != "transpose"]
    fams = sorted({r["family"] for r in rows})
    for window in (128, 512):
        c, alpha, k, beta = per_warp_fit(rows, window)
        held = [0.0] * len(rows)
        for f in fams:
            rc, ra, rk, rb = per_warp_fit([r for r in rows if r["family"] != f], window)
            for i, r in enumerate(rows):
                if r["family"] == f:
                    held[i] = per_warp_errors([r], window, rc, ra, rk, rb)[0]
        label = f"per warp, W {window}: c {c:.3f} alpha {alpha} k {k} beta {beta}"
        print(f"{label:44s} {summary(per_warp_errors(rows, window, c, alpha, k, beta), rows)}")
        print(f"{'   each family held out':44s} {summary(held, rows)}")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "collect":
        collect(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 3 and sys.argv[1] == "fit":
        main_fit(sys.argv[2])
    else:
        sys.exit(__doc__)
