#!/usr/bin/env python3
"""Whether the time model's round per block barrier (`Launch::barriers_per_thread` adds one
round of waiting per barrier; docs/validation.md "A block barrier costs almost nothing") should
go, through validation/time_fit.py's replica over the validation reports: the launches of the
kernels with one `__syncthreads()` a thread (the barrier benchmark's sync and exchange kernels,
jacobi2d-shared, the tiled transposes, the tile-row kernels, the padded lbm pulls) lose that
round (their loads spread over one round fewer), scored with the shipped constants and refitted
(time_fit.py's objective and grid of `--constants-only`), over all launches and per family.

    python3 validation/barrier_round_check.py docs/data/validation-h*.json

Only for reports written before 2026-12-04, whose rounds include the barriers: since then a
barrier is not a round (`[timing] barrier_cycles`; the reports carry `barriers_per_warp`), and
`validation/time_fit.py --barrier-cv` compares the two rules.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import time_fit as tf  # noqa: E402

ONE_BARRIER = re.compile(r"^(barrier:(sync|exchange)_|jacobi2d-shared|transpose-tiled|tile-rows:|lbm-parts:lbm_pull_s(13|27))")


def without_round(e):
    if not ONE_BARRIER.match(e["launch"]) or e["rounds"] <= 1:
        return e
    r = e["rounds"]
    return dict(e, rounds=r - 1, loads=e["loads"] * r / (r - 1))


def show(name, launches, params):
    s = tf.score(launches, params)
    print(f"{name}: {params} median {100 * s[1]:.2f} %, p90 {100 * s[2]:.1f} %, worst pick {100 * s[3]:.1f} %, "
          f"{s[4]} groups below 97 %")
    for fam in sorted({e["family"] for e in launches if ONE_BARRIER.match(e["launch"])}):
        t = tf.score([e for e in launches if e["family"] == fam], params)
        print(f"    {fam:16} median {100 * t[1]:5.1f} %  p90 {100 * t[2]:5.1f} %")


def main():
    paths = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    launches = tf.load(paths)
    if any(e["barriers"] for e in launches):
        print("these reports count barriers apart from the rounds (barriers_per_warp, since 2026-12-04): "
              "use validation/time_fit.py --barrier-cv", file=sys.stderr)
        sys.exit(2)
    dropped = [without_round(e) for e in launches]
    print(f"{len(launches)} launches, {sum(1 for e in launches if ONE_BARRIER.match(e['launch']))} with one barrier a thread")
    show("with the round, shipped constants", launches, tf.SHIPPED)
    show("with the round, refitted", launches, tf.fit(launches, tf.CONSTANTS))
    show("without it, shipped constants", dropped, tf.SHIPPED)
    show("without it, refitted", dropped, tf.fit(dropped, tf.CONSTANTS))


if __name__ == "__main__":
    main()
