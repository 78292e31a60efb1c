#!/usr/bin/env python3
"""Would the time model gain from counting a warp's instructions? (issue 53, item 3)

The model sees memory accesses, rounds of loads and barriers, not the other instructions; the
tiled transpose with its block height known only at run time runs 1.39x slower than the same
accesses with it known to the compiler (77 against 28 instructions a warp,
validation/tile_rows.cu). This tries two forms with the measured instruction counts
(`smsp__inst_executed.sum` over the launch's active warps) on the H200 sets whose ncu exports
carry them, through validation/time_fit.py's replica of the queueing model:

  delay   each warp's delay lengthened by k cycles per instruction, the barrier's round kept;
  sync    the barrier's round replaced by c cycles per instruction times the block's warps on
          one of the SM's four schedulers (block warps / 4), once per barrier: after a barrier
          the block waits for its last warp, which waits for its scheduler's other warps;

each with the constants (a, b, C, h) refitted over the same grid as time_fit.py
--constants-only, over all these launches and with each kernel family held out in turn.

  validation/instruction_fit.py          (about 25 minutes on one core)
"""
import csv, io, pathlib, statistics, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import time_fit as tf  # noqa: E402

REPO = tf.REPO
# report name -> tests/data/h200/ directory of its ncu export
SETS = {"barrier": "barrier", "tile-rows": "tile_rows", "lbm-parts": "lbm_parts",
        "streams-occupancy": "streams_occupancy", "streams": "streams", "turnover": "turnover",
        "partial-streams": "partial_streams", "families": "families", "streams-narrow": "streams_narrow"}


def ncu(path):
    """ncu's ID -> metric -> value of a raw `--csv --print-units base` export."""
    text = open(path).read()
    rows = list(csv.reader(io.StringIO(text[text.index('"ID"'):])))
    h = rows[0]
    iid, im, iv = h.index("ID"), h.index("Metric Name"), h.index("Metric Value")
    out = {}
    for r in rows[1:]:
        try:
            out.setdefault(int(r[iid]), {})[r[im]] = float(r[iv].replace(",", ""))
        except (IndexError, ValueError):  # short lines, "n/a"
            pass
    return out


def barriers(e):
    """`__syncthreads()` a thread passes (validation/*.cu: barrier's sync and exchange kernels,
    every tile_rows kernel, lbm_parts' shared-memory pads; none elsewhere in these sets)."""
    k = e["kernel"]
    if e["set"].endswith("tile-rows.json"):
        return 1
    if e["set"].endswith("barrier.json") and ("sync" in k or "exchange" in k):
        return 1
    return 1 if "_s13" in k or "_s27" in k else 0


def load():
    launches = tf.load([str(REPO / f"docs/data/validation-h200-{s}.json") for s in SETS])
    exports = {s: ncu(REPO / f"tests/data/h200/{d}/ncu.csv") for s, d in SETS.items()}
    for e in launches:
        m = exports[e["set"][len("validation-h200-"):-len(".json")]][e["id"]]
        assert abs(m["sm__ctas_launched.sum"] - e["blocks"]) < 1.5, e["launch"]
        e["instructions"] = m["smsp__inst_executed.sum"] / e["warps"]
    return launches


def form(kind, k):
    """A replica predictor with the instruction term `kind` at `k` cycles per instruction."""
    def predict(e, params, warps=None, pw="shipped"):
        a, b = params[0], params[1]
        per_round = (a + b * e["loads"]) * tf.HW[e["hw"]]["latency"]
        rounds = max(e["rounds"], 1.0)
        if kind == "delay":
            extra = k * e["instructions"]
        else:
            nb = barriers(e)
            rounds = max(rounds - nb, 1.0)
            extra = k * e["instructions"] * max(e["block_warps"] / 4.0, 1.0) * nb
        # the replica's delay is (a + b loads) x latency x rounds: carry the extra as rounds
        return tf.predict(dict(e, rounds=rounds + extra / per_round), params, warps, pw)
    return predict


def fit(launches, kind, ks):
    return min(((tf.score_predicted([(e, form(kind, k)(e, p)) for e in launches])[0], k, p)
                for k in ks for p in tf.CONSTANTS), key=lambda t: t[0])


def line(tag, launches, predict, params):
    s = tf.score_predicted([(e, predict(e, params)) for e in launches])
    fams = sorted(set(e["family"] for e in launches))
    per = {f: statistics.median(abs(predict(e, params) / e["measured"] - 1)
                                for e in launches if e["family"] == f) for f in fams}
    print(f"{tag}: median {s[1]*100:.2f} %, p90 {s[2]*100:.1f} %, worst pick {s[3]*100:.1f} %, "
          f"{s[4]} below 97 %; " + ", ".join(f"{f} {v*100:.1f}" for f, v in per.items()), flush=True)


def main():
    launches = load()
    print(f"{len(launches)} launches with measured instruction counts, "
          f"{len(set(e['family'] for e in launches))} families")
    line(f"shipped {tf.SHIPPED}", launches, tf.predict, tf.SHIPPED)
    for kind, ks in (("none", (0.0,)), ("delay", (0.5, 1.0, 2.0, 3.0, 4.0)),
                     ("sync", (0.5, 1.0, 1.5, 2.0, 3.0))):
        _, k, p = fit(launches, "delay" if kind == "none" else kind, ks)
        line(f"{kind} k={k} refitted {p}", launches, form("delay" if kind == "none" else kind, k), p)
        held = []
        for fam in sorted(set(e["family"] for e in launches)):
            train = [e for e in launches if e["family"] != fam]
            _, kf, pf = fit(train, "delay" if kind == "none" else kind, ks)
            held += [abs(form("delay" if kind == "none" else kind, kf)(e, pf) / e["measured"] - 1)
                     for e in launches if e["family"] == fam]
        held.sort()
        print(f"   held out by family: median {statistics.median(held)*100:.2f} %, "
              f"p90 {held[int(0.9 * (len(held) - 1))]*100:.1f} %", flush=True)


if __name__ == "__main__":
    main()
