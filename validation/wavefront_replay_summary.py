#!/usr/bin/env python3
"""Summarise the H200 run of validation/wavefront_replay.cu (tests/data/h200/wavefront_replay/,
README.md there) against the L1 data-stage rule (src/sim/data_stage.rs, docs/model.md "Coalescer
and L1", `replay_block_loads`).

    validation/wavefront_replay_summary.py [--data DIR] [--simulate] [--gputraffic PATH]

The global loads' wavefronts are `l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read` (the total
`l1tex__data_pipe_lsu_wavefronts` is that plus `..._mem_shared`, which here is the 2 passes per
launched warp of the blockIdx.x and .y reads; checked below). "Extra" is what the global loads
take beyond the bank rule (data_stage.rs `passes`, replicated here for these patterns).

Question 1 (kernels "streams", one load in flight per warp, and "batch", all n in flight): n loads
per thread from n arrays, blocks of 1-32 warps, all missing (hit 0) or each load made twice (hit
1). Printed per kernel: the extra per missing line, measured and by the shipped rule
(missing_request_line_wavefronts x min(1, loads per block / replay_block_loads)); the extra per
warp; and candidate rules scored over its launches (the per-warp form with fixed constants was
fitted on "streams").
Question 2 (kernel "rows"): one load of a bx x by tile whose rows are `pitch` elements apart.
Printed: passes per load instruction, measured, by the bank rule, and the lines it touches.

--simulate also runs `gputraffic simulate` on a trace written per streams and batch launch (in a temporary
directory) and adds the shipped rule applied to the simulator's own counts (data passes, lines
of missing loads, partial lines, load requests per block; the constants from hw-configs/h200.toml),
which is what the simulator reports for the global loads.
"""
import argparse
import collections
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WF = "l1tex__data_pipe_lsu_wavefronts.sum"
WF_GLOBAL = "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum"
WF_SHARED = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
HIT = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"
MISS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"
WARPS = "smsp__warps_launched.sum"
CTAS = "sm__ctas_launched.sum"
INST = "smsp__inst_executed_op_global_ld.sum"


def load_run(csv_path, launches_path, run):
    """One ncu run: ncu ID i is launch line i of the list (comments and blank lines skipped)."""
    lines = [l.split() for l in open(launches_path) if l.strip() and not l.startswith("#")]
    rows = [l for l in open(csv_path).read().splitlines() if l.startswith('"')]
    metrics = collections.defaultdict(dict)
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        v = r["Metric Value"].replace(",", "")
        metrics[int(r["ID"])][r["Metric Name"]] = float(v) if v not in ("n/a", "") else None
    out = []
    for i in sorted(metrics):
        k, t, n, hit, nx, ny, bx, by, pitch = lines[i][:9]
        out.append(dict(run=run, line=" ".join(lines[i][:9]), kernel=k, type=t, size=8 if t == "f64" else 4,
                        n=int(n), hit=int(hit), nx=int(nx), ny=int(ny), bx=int(bx), by=int(by),
                        pitch=int(pitch), **metrics[i]))
    return out


def hw_l1():
    """The [l1] constants the rule uses, read from hw-configs/h200.toml."""
    text = open(os.path.join(ROOT, "hw-configs", "h200.toml")).read()
    l1 = text[text.index("[l1]"):]
    l1 = l1[:l1.index("\n[", 1)]
    get = lambda k: float(re.search(rf"^{k}\s*=\s*([0-9.eE+-]+)", l1, re.M).group(1))
    return dict(miss=get("missing_request_line_wavefronts"), partial=get("partial_line_wavefronts"),
                block_loads=get("replay_block_loads"))


def tag_windows(addrs, size, tag_lines=4):
    """The parts data_stage.rs `passes` applies the bank rule to, for one warp of `size`-byte
    aligned accesses (all lanes active): per group of lanes, each `tag_lines` lines of the
    group's words in address order (`tag_lines=None`: the whole group), as (lines, words)."""
    g = 128 // min(max(size, 4), 16)
    for first in range(0, 32, g):
        words = sorted({(a >> 2) + w for a in addrs[first:first + g] for w in range(max(size // 4, 1))})
        lines = sorted({w >> 5 for w in words})
        step = tag_lines or len(lines)
        for i in range(0, len(lines), step):
            part = set(lines[i:i + step])
            yield part, [w for w in words if w >> 5 in part]


def bank_passes(addrs, size, tag_lines=4):
    """data_stage.rs `passes` for one warp: the largest count of words in one bank, summed over
    the [`tag_windows`] (the tag stage's wavefronts; `tag_lines=None`: the bank rule over the
    whole group, the rule before 2026-11-29)."""
    return sum(max(collections.Counter(w % 32 for w in words).values())
               for _, words in tag_windows(addrs, size, tag_lines))


def warp_addresses(r, warp, block=(0, 0)):
    """Byte addresses (from the array start) of one warp of a rows / streams launch, array 0."""
    out = []
    for l in range(32):
        t = warp * 32 + l
        x = block[0] * r["bx"] + t % r["bx"]
        y = block[1] * r["by"] + t // r["bx"]
        out.append((y * r["pitch"] + x) * r["size"])
    return out


def rule_passes(r, shift=0):
    """Passes by the data-stage rule, lines per load instruction (both ends of each access) and
    the bank rule over whole groups (the rule before), averaged over the warps of one block (the
    patterns repeat from block to block up to a shift by whole rows or 128-byte multiples), for
    the tile moved by `shift` elements."""
    wpb = r["bx"] * r["by"] // 32
    passes = banks = lines = 0
    for w in range(wpb):
        a = [x + shift * r["size"] for x in warp_addresses(r, w)]
        passes += bank_passes(a, r["size"])
        banks += bank_passes(a, r["size"], None)
        lines += len({x >> 7 for x in a} | {(x + r["size"] - 1) >> 7 for x in a})
    return passes / wpb, lines / wpb, banks / wpb


def derive(r, l1):
    W = r[WARPS]
    assert r[WF] == r[WF_GLOBAL] + r[WF_SHARED], r["line"]
    assert r[WF_SHARED] == 2 * W, r["line"]
    r["wpb"] = r["bx"] * r["by"] // 32
    r["req_per_warp"] = r[REQ] / W
    r["loads_per_block"] = r[REQ] / r[CTAS]
    r["bank"], r["lines_per_req"], r["banks_only"] = rule_passes(r)
    r["extra"] = r[WF_GLOBAL] - r["bank"] * r[REQ]
    r["miss_lines"] = r[MISS] / 4 if r["kernel"] != "rows" else None  # whole lines miss or hit
    r["hit_frac"] = r[HIT] / r[SEC]
    scale = min(1.0, r["loads_per_block"] / l1["block_loads"])
    if r["miss_lines"] is not None:
        r["rule_extra"] = l1["miss"] * r["miss_lines"] * scale
    return r


def streams_trace(r):
    """A gputraffic trace of one k_streams launch: n arrays, the n loads made 1 + hit times."""
    arrays = "".join(
        f'[[arrays]]\nname = "a{i}"\nelement_bytes = {r["size"]}\ndims = ["pitch", "ny"]\nalign_bytes = 4096\n\n'
        for i in range(r["n"]))
    body = ", ".join(f'{{ load = "a{i}", index = "c" }}' for _ in range(1 + r["hit"]) for i in range(r["n"]))
    return f"""name = "wavefront-replay-streams"
description = "validation/wavefront_replay.cu k_streams: {r['line']}"
[params]
nx = {r['nx']}
ny = {r['ny']}
pitch = {r['pitch']}

{arrays}[launch]
block = [{r['bx']}, {r['by']}, 1]
grid = ["cdiv(nx, blockDim.x)", "cdiv(ny, blockDim.y)", "1"]
registers_per_thread = 16

[thread]
let = ["x = blockIdx.x * blockDim.x + threadIdx.x", "y = blockIdx.y * blockDim.y + threadIdx.y", "c = y * pitch + x"]
guard = "x < nx && y < ny"
lattice_updates = "nx * ny"
flops_per_update = 0
body = [{body}]
"""


def simulate(r, l1, exe, tmp):
    path = os.path.join(tmp, "t.toml")
    open(path, "w").write(streams_trace(r))
    out = subprocess.run([exe, "simulate", "--kernel", path, "--hw", "h200", "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    s = json.loads(out)["simulation"]
    m = json.loads(out)["metrics"]
    blocks = (r["nx"] // r["bx"]) * (r["ny"] // r["by"])
    scale = min(1.0, m[REQ] / blocks / l1["block_loads"])
    r["sim_global"] = s["l1_data_passes"] + (l1["miss"] * s["l1_load_miss_request_lines"]
                                             + l1["partial"] * s["l1_load_partial_lines"]) * scale
    r["sim_hit_frac"] = 1 - m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"] / m[SEC]


def median_abs(xs):
    return statistics.median(abs(x) for x in xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data", "h200", "wavefront_replay"))
    ap.add_argument("--simulate", action="store_true")
    ap.add_argument("--gputraffic", default=os.path.join(ROOT, "target", "release", "gputraffic"))
    a = ap.parse_args()
    l1 = hw_l1()
    d = a.data
    runs = load_run(f"{d}/ncu.csv", f"{d}/launches.txt", "first") + \
        load_run(f"{d}/ncu_rest.csv", f"{d}/launches_rest.txt", "rest")
    repeat = load_run(f"{d}/ncu_rows_repeat.csv", f"{d}/launches_rows_repeat.txt", "repeat")
    batch = load_run(f"{d}/ncu_batch.csv", f"{d}/launches_batch.txt", "batch")
    for r in runs + repeat + batch:
        derive(r, l1)
    print(f"{len(runs)} launches (+{len(repeat)} rows repeated, {len(batch)} batch); global wavefronts = total - shared "
          f"(shared = 2 per warp, blockIdx.x/.y, in all); rule: {l1['miss']} x missing lines x "
          f"min(1, loads per block / {l1['block_loads']:g})")

    for kernel, st in (("streams", [r for r in runs if r["kernel"] == "streams"]), ("batch", batch)):
        if a.simulate:
            with tempfile.TemporaryDirectory() as tmp:
                for r in st:
                    simulate(r, l1, a.gputraffic, tmp)
        shapes = [(32, 1), (64, 1), (128, 1), (256, 1), (512, 1), (1024, 1), (32, 8)]
        head = " ".join(f"{bx}x{by}".rjust(11) for bx, by in shapes)
        print(f"\nQ1 {kernel}: extra passes per missing line, measured / shipped rule "
              "(warps per block 1 2 4 8 16 32, and 8 as 32x8); hit% of the sectors")
        print(f"{'type':4} {'hit':>3} {'n':>2} {head}   hit%")
        for t in ("f32", "f64"):
            for hit in (0, 1):
                for n in (1, 2, 4, 8):
                    cells, hits = [], []
                    for bx, by in shapes:
                        r = next(r for r in st if (r["type"], r["hit"], r["n"], r["bx"], r["by"]) == (t, hit, n, bx, by))
                        cells.append(f"{r['extra'] / r['miss_lines']:.3f}/{r['rule_extra'] / r['miss_lines']:.3f}".rjust(11))
                        hits.append(100 * r["hit_frac"])
                    print(f"{t:4} {hit:>3} {n:>2} {' '.join(cells)}   {min(hits):.0f}-{max(hits):.0f}")
        print(f"\nQ1 {kernel}: extra passes per launched warp, measured (rows: requests per warp)")
        print(f"{'type':4} {'hit':>3} {'n':>2} {'req/w':>5} {head}")
        for t in ("f32", "f64"):
            for hit in (0, 1):
                for n in (1, 2, 4, 8):
                    cells = []
                    for bx, by in shapes:
                        r = next(r for r in st if (r["type"], r["hit"], r["n"], r["bx"], r["by"]) == (t, hit, n, bx, by))
                        cells.append(f"{r['extra'] / r[WARPS]:.3f}".rjust(11))
                    print(f"{t:4} {hit:>3} {n:>2} {n * (1 + hit):>5} {' '.join(cells)}")

        # Candidate rules over the streams launches: error of the global wavefronts.
        print(f"\nQ1 candidate rules, global-load wavefronts of the {len(st)} {kernel} launches (median |error|, worst):")

        def score(name, pred):
            errs = [pred(r) / r[WF_GLOBAL] - 1 for r in st]
            ex = [(pred(r) - r["bank"] * r[REQ]) / r["extra"] - 1 for r in st]
            worst = max(errs, key=abs)
            print(f"  {name:86} {100 * median_abs(errs):5.1f} % (worst {100 * worst:+.1f} %); "
                  f"of the extra alone {100 * median_abs(ex):5.0f} %")

        bank = lambda r: r["bank"] * r[REQ]
        score("bank rule alone", bank)
        score(f"shipped: {l1['miss']} x missing lines x min(1, loads per block / 8)", lambda r: bank(r) + r["rule_extra"])
        score(f"unscaled: {l1['miss']} x missing lines", lambda r: bank(r) + l1["miss"] * r["miss_lines"])
        if a.simulate:
            score("the simulator (its own L1 hits, shipped rule)", lambda r: r["sim_global"])
        # Per warp, by warps per block: the best constant c(w, size) for each warps-per-block and
        # element size (a table, not a rule), to show how much of the extra the block size alone explains.
        per = collections.defaultdict(list)
        for r in st:
            per[(r["wpb"], r["by"], r["type"])].append(r["extra"] / r[WARPS])
        cw = {k: statistics.median(v) for k, v in per.items()}
        score("per warp: c(warps per block, type) x warps (medians, 14 values)",
              lambda r: bank(r) + cw[(r["wpb"], r["by"], r["type"])] * r[WARPS])
        perl = collections.defaultdict(list)
        for r in st:
            perl[(r["wpb"], r["by"], r["type"])].append(r["extra"] / r["miss_lines"])
        cl = {k: statistics.median(v) for k, v in perl.items()}
        score("per missing line: c(warps per block, type) x missing lines (medians)",
              lambda r: bank(r) + cl[(r["wpb"], r["by"], r["type"])] * r["miss_lines"])
        perr = collections.defaultdict(list)
        for r in st:
            perr[(r["wpb"], r["by"], r["type"])].append(r["extra"] / r[WARPS] / (r["req_per_warp"] ** 0.5))
        cr = {k: statistics.median(v) for k, v in perr.items()}
        score("per warp: c(warps per block, type) x sqrt(requests per warp) x warps",
              lambda r: bank(r) + cr[(r["wpb"], r["by"], r["type"])] * r["req_per_warp"] ** 0.5 * r[WARPS])

        # A per-warp form fitted on these launches (grid over the exponents and the block knee, the
        # factor by the median ratio; in-sample): docs/model.md quotes it as what the data support.
        score("per warp: 0.33 x (requests/warp)^0.4 x (lines/request)^0.5 x min(1, warps/block / 4)",
              lambda r: bank(r) + 0.33 * r[WARPS] * r["req_per_warp"] ** 0.4 * r["lines_per_req"] ** 0.5
              * min(1.0, r["wpb"] / 4))

    print("\nQ2 rows: passes per load instruction (bx x by tile, rows `pitch` apart); "
          "measured (hit 0) / bank rule over the whole warp / data-stage rule (banks within each "
          "4 lines) / lines; 1 warp per block | 8 warps per block")
    rows = [r for r in runs if r["kernel"] == "rows"]
    for t in ("f32", "f64"):
        pitches = sorted({r["pitch"] for r in rows if r["type"] == t})
        print(f"{t}: pitch " + "  ".join(f"{p:>26}" for p in pitches))
        for bx in (1, 2, 4, 8, 16, 32):
            cells = []
            for p in pitches:
                one = [r for r in rows if (r["type"], r["bx"], r["pitch"], r["hit"]) == (t, bx, p, 0)]
                one.sort(key=lambda r: r["wpb"])
                s = " | ".join(f"{r[WF_GLOBAL] / r[REQ]:5.1f}" for r in one)
                cells.append(f"{s} /{one[0]['banks_only']:3.0f} /{one[0]['bank']:3.0f} "
                             f"/{one[0]['lines_per_req']:3.0f}")
            print(f"  bx {bx:>2}     " + "  ".join(f"{c:>26}" for c in cells))
    r0 = [r for r in rows if r["hit"] == 0]

    def score_rows(name, extra):
        errs = [(r["bank"] * r[REQ] + extra(r)) / r[WF_GLOBAL] - 1 for r in r0]
        print(f"  {name:70} {100 * median_abs(errs):5.1f} % (worst {100 * max(errs, key=abs):+.1f} %)")

    # Every sector of these loads misses (hit 0): the lines of the instruction are its missing lines.
    replay = lambda r: l1["miss"] * r["lines_per_req"] * r[REQ] * min(1.0, r["loads_per_block"] / l1["block_loads"])
    print(f"Q2 rules over the {len(r0)} rows launches with hit 0 (global-load wavefronts, median |error|, worst):")
    banks_only = lambda r: (r["banks_only"] - r["bank"]) * r[REQ]
    score_rows("bank rule over the whole warp alone (before)", banks_only)
    score_rows("before + replays of missing lines", lambda r: banks_only(r) + replay(r))
    score_rows("before + replays + crowded lines tried (0.178 per line beyond two per pass)",
               lambda r: banks_only(r) + replay(r)
               + 0.178 * max(0.0, r["lines_per_req"] - 2 * r["banks_only"]) * r[REQ])
    score_rows("data-stage rule (banks within each 4 lines) alone", lambda r: 0)
    score_rows("shipped (data-stage rule + replays of missing lines)", replay)
    merged = [r for r in rows if r["hit"] == 1]
    print(f"\nQ2 hits: in all {len(merged)} rows launches with hit 1 the load requests per warp are "
          f"{sorted({r['req_per_warp'] for r in merged})} and the L1 hit sectors "
          f"{100 * max(r['hit_frac'] for r in merged):.1f} % at most: the re-read was merged with the first "
          f"load (fixed in wavefront_replay.cu since); no data on crowded lines that hit.")
    pairs = {r["line"]: r for r in rows}
    diffs = [r[WF_GLOBAL] / pairs[r["line"]][WF_GLOBAL] - 1 for r in repeat if r["line"] in pairs]
    print(f"Repeat of the {len(diffs)} rows launches: global wavefronts within "
          f"{100 * max(abs(x) for x in diffs):.1f} % of the first runs (median {100 * median_abs(diffs):.2f} %).")


if __name__ == "__main__":
    sys.exit(main())
