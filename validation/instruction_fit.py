#!/usr/bin/env python3
"""Would the time model gain from counting a warp's instructions? (issue 53, item 3)

The model sees memory accesses, rounds of loads and barriers, not the other instructions; the
tiled transpose with its block height known only at run time runs 1.39x slower than the same
accesses with it known to the compiler (77 against 28 instructions a warp,
validation/tile_rows.cu). This tries two forms with the measured instruction counts
(`smsp__inst_executed.sum` over the launch's active warps) on the H200 sets whose ncu exports
carry them, and those counted apart for the dev set, the few-block z-loop and the shared-memory
kernels (validation/instructions.sh), through validation/time_fit.py's replica of the queueing model:

  delay   each warp's delay lengthened by k cycles per instruction, the barrier's round kept;
  sync    the barrier's round replaced by c cycles per instruction times the block's warps on
          one of the SM's four schedulers (block warps / 4), once per barrier: after a barrier
          the block waits for its last warp, which waits for its scheduler's other warps;

each with the constants (a, b, C, h) refitted over the same grid as time_fit.py
--constants-only, over all these launches and with each kernel family held out in turn.

  validation/instruction_fit.py          (about 40 minutes on one core)
"""
import csv, io, json, pathlib, statistics, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import time_fit as tf  # noqa: E402

REPO = tf.REPO
# docs/data/validation-h200-<report>.json -> the ncu export under tests/data/h200/ with its
# instruction counts (ID i: the report's launch i); those of instructions/ were counted apart, by
# validation/instructions.sh
SETS = {"barrier": "barrier/ncu.csv", "tile-rows": "tile_rows/ncu.csv",
        "lbm-parts": "lbm_parts/ncu.csv", "streams-occupancy": "streams_occupancy/ncu.csv",
        "streams": "streams/ncu.csv", "turnover": "turnover/ncu.csv",
        "partial-streams": "partial_streams/ncu.csv", "families": "families/ncu.csv",
        "streams-narrow": "streams_narrow/ncu.csv", "issue-bound": "issue_bound/ncu.csv",
        "validation-h200": "instructions/dev_instructions.csv",
        "zloop-fewblocks": "instructions/zloop_instructions.csv",
        "transpose": "instructions/transpose_instructions.csv",
        "shared-stencil": "instructions/stencil_instructions.csv"}


def report(name):
    return REPO / "docs/data" / (f"{name}.json" if name.startswith("validation") else f"validation-h200-{name}.json")


def ncu(path):
    """ncu's ID -> metric -> value of a raw `--csv --print-units base` export, with the launch's
    kernel, block and grid under "kernel", "block" and "grid"."""
    text = open(path).read()
    rows = list(csv.reader(io.StringIO(text[text.index('"ID"'):])))
    h = rows[0]
    iid, im, iv = h.index("ID"), h.index("Metric Name"), h.index("Metric Value")
    ik, ib, ig = h.index("Kernel Name"), h.index("Block Size"), h.index("Grid Size")
    out = {}
    for r in rows[1:]:
        try:
            m = out.setdefault(int(r[iid]), {})
            m.update(kernel=r[ik], block=r[ib], grid=r[ig])
            m[r[im]] = float(r[iv].replace(",", ""))
        except (IndexError, ValueError):  # short lines, "n/a"
            pass
    return out


def same_launch(m, row):
    """Whether export launch `m` is report row `row`: its kernel (letters and digits, template
    brackets and separators dropped), block and blocks launched."""
    name = lambda k: "".join(ch for ch in k.split("(")[0].split(":")[-1].removeprefix("void ").lower()
                             if ch.isalnum())
    block = tuple(int(v) for v in m["block"].strip("()").split(","))
    return (name(m["kernel"]) == name(row["kernel"]) and list(block) == row["block"]
            and abs(m["sm__ctas_launched.sum"] - row["blocks"]) < 1.5)


def barriers(e):
    """`__syncthreads()` a thread passes (validation/*.cu: barrier's sync and exchange kernels,
    every tile_rows kernel, lbm_parts' shared-memory pads, the tiled transpose and the shared
    stencil; none elsewhere in these sets)."""
    k = e["kernel"]
    if e["set"].endswith("tile-rows.json") or k in ("transpose-tiled", "jacobi2d-shared"):
        return 1
    if e["set"].endswith("barrier.json") and ("sync" in k or "exchange" in k):
        return 1
    return 1 if "_s13" in k or "_s27" in k else 0


def load():
    launches = tf.load([str(report(s)) for s in SETS])
    exports = {report(s).name: ncu(REPO / "tests/data/h200" / f) for s, f in SETS.items()}
    blocks = {(r.name, x["launch"]): x["block"] for r in map(report, SETS)
              for x in json.load(open(r))["rows"]}
    apart = {report(s).name for s, f in SETS.items() if f.startswith("instructions/")}
    for e in launches:
        row = dict(kernel=e["kernel"], block=blocks[(e["set"], e["launch"])], blocks=e["blocks"])
        if e["set"] in apart:  # counted apart, in the order of the launch lists: found by launch
            found = [m for m in exports[e["set"]].values() if same_launch(m, row)]
        else:  # the report's own export: its launch IDs
            found = [exports[e["set"]][e["id"]]]
        assert len(found) == 1 and same_launch(found[0], row), (e["set"], e["launch"])
        e["instructions"] = found[0]["smsp__inst_executed.sum"] / e["warps"]
    return launches


def form(kind, k):
    """A replica predictor with the instruction term `kind` at `k` cycles per instruction."""
    def predict(e, params, warps=None, pw="shipped"):
        a, b = params[0], params[1]
        # Reports since 2026-12-04 count a barrier apart (`barriers_per_warp`, 100 cycles, not a
        # round): the forms below are of the rule before, a round a barrier.
        e = tf.as_rounds(e)
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
    # no term: the delay form at k = 0
    for label, kind, ks in (("none", "delay", (0.0,)), ("delay", "delay", (0.5, 1.0, 2.0, 3.0, 4.0)),
                            ("sync", "sync", (0.5, 1.0, 1.5, 2.0, 3.0))):
        _, k, p = fit(launches, kind, ks)
        line(f"{label} k={k} refitted {p}", launches, form(kind, k), p)
        held = []
        for fam in sorted(set(e["family"] for e in launches)):
            train = [e for e in launches if e["family"] != fam]
            _, kf, pf = fit(train, kind, ks)
            held += [abs(form(kind, kf)(e, pf) / e["measured"] - 1)
                     for e in launches if e["family"] == fam]
        held.sort()
        print(f"   held out by family: median {statistics.median(held)*100:.2f} %, "
              f"p90 {held[int(0.9 * (len(held) - 1))]*100:.1f} %", flush=True)


if __name__ == "__main__":
    main()
