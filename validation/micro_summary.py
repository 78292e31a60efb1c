#!/usr/bin/env python3
"""Headline numbers from the microbenchmark CSVs that validation/micro.sh writes.

    micro_summary.py DIR        # DIR holds latency.csv, l2_near_far.csv, bw_inflight.csv, ...

Prints markdown: idle latencies (L1, L2 near/far, DRAM near/far), the L2 partition map, bandwidth
at full occupancy and the bytes in flight per SM that reach 50% / 90% of it, the launch-overhead
fit, the L1 wavefronts per instruction of every pattern, the L1 capacity. Standard library only;
reads whichever files exist.
"""
import csv
import math
import os
import statistics as st
import sys
from collections import defaultdict


def rows(d, name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return []
    with open(p, newline="") as f:
        return list(csv.DictReader(f))


def med(v):
    return st.median(v) if v else float("nan")


def latency(d):
    r = rows(d, "latency.csv")
    if not r:
        return None
    clk = med([float(x["clock_mhz"]) for x in r])
    def pick(pat, lo, hi):
        return med([float(x["cycles_per_load"]) for x in r if x["pattern"] == pat and lo <= int(x["size_bytes"]) <= hi])
    out = {
        "clock_mhz": clk,
        "L1 hit (rand, 4-192 KiB)": pick("rand", 4096, 196608),
        "L2 hit, own partition (rand, 0.4-16 MiB)": pick("rand", 393216, 16 << 20),
        "DRAM, TLB-friendly (rand_2m, 256 MiB-2 GiB)": pick("rand_2m", 256 << 20, 2 << 30),
        "DRAM, random lines over 1-2 GiB (rand)": pick("rand", 1 << 30, 2 << 30),
    }
    print(f"\n### Idle latency (one thread, dependent 8-byte loads; SM clock {clk:.0f} MHz under ncu --clock-control base)\n")
    print("| level | cycles | ns |\n|---|---|---|")
    for k, v in out.items():
        if k != "clock_mhz":
            print(f"| {k} | {v:.1f} | {v / clk * 1000:.1f} |")
    print("\nlatency versus footprint (rand pattern, cycles): " + ", ".join(
        f"{int(x['size_bytes']) // 1024} KiB {float(x['cycles_per_load']):.0f}" for x in r if x["pattern"] == "rand"))
    return out


def near_far(d):
    r = rows(d, "l2_near_far.csv")
    runs = {x["config"]: x for x in rows(d, "l2_near_far_runs.csv")}
    pm = rows(d, "l2_partition_map.csv")
    if not r:
        return
    lat = defaultdict(dict)
    for x in r:
        lat[(x["config"], int(x["pass"]))][int(x["line_offset_bytes"])] = int(x["cycles"])
    clk = med([float(x["clock_mhz"]) for x in runs.values()]) if runs else float("nan")
    # partition of each SM relative to SM 0 (from the map)
    other = set()
    if pm:
        other = {int(x["warm_sm"]) for x in pm if x["ref_sm"] == "0" and float(x["far_fraction"]) > 0.2}
    print(f"\n### L2 near / far (per-load clock64, one thread; SM clock {clk:.0f} MHz)\n")
    print("| config | pass | what | lines | median cycles | p10 | p90 | ns (median) |\n|---|---|---|---|---|---|---|---|")
    def line(cfg, ps, what, v):
        v = sorted(v)
        if not v:
            return
        print(f"| {cfg} | {ps} | {what} | {len(v)} | {med(v):.0f} | {v[len(v) // 10]} | {v[9 * len(v) // 10]} | {med(v) / clk * 1000:.0f} |")
    base = lat.get(("l1_base", 1), {})
    line("l1_base", 1, "L1 hit (timing overhead check)", base.values())
    for m in ("m0", "m131", "m66"):
        cold = lat.get((m + "_cold", 0))
        if not cold:
            continue
        vals = sorted(cold.values())
        # split the cold (DRAM) pass at the widest gap between 400 and 700 cycles
        mid = [v for v in vals if 400 < v < 700]
        gaps = [(b - a, (a + b) / 2) for a, b in zip(mid, mid[1:])]
        thr = max(gaps)[1] if gaps else 550
        far = {o for o, c in cold.items() if c > thr}
        line(m + "_cold", 0, f"DRAM, home partition near (< {thr:.0f})", [c for o, c in cold.items() if o not in far])
        line(m + "_cold", 0, "DRAM, home partition far", [c for o, c in cold.items() if o in far])
        line(m + "_cold", 1, "L2 hit after own pass (all lines)", lat[(m + "_cold", 1)].values())
        for cfg in sorted(c for (c, p) in lat if c.startswith(m + "_w") and p == 0):
            w = int(cfg.split("_w")[1]) if cfg.split("_w")[1].isdigit() else None
            v0 = lat[(cfg, 0)]; v1 = lat[(cfg, 1)]
            farl = [c for o, c in v0.items() if c > v1[o] + 70]
            nearl = [c for o, c in v0.items() if c <= v1[o] + 70]
            tag = ""
            if pm and w is not None:
                tag = " (warmer in the other partition)" if (w in other) != (int(runs.get(cfg, {}).get("meas_sm", 0)) in other) else " (warmer in the same partition)"
            line(cfg, 0, "L2 hit, line left near by warmer" + tag, nearl)
            line(cfg, 0, "L2 hit, line only in the far partition" + tag, farl)
        print(f"\n{m}: lines whose DRAM fill goes to the far partition: {len(far)}/{len(cold)} = {len(far) / len(cold):.3f}")
    if pm:
        a = sorted({0} | {int(x["warm_sm"]) for x in pm if x["ref_sm"] == "0" and float(x["far_fraction"]) <= 0.2 and float(x["far_fraction"]) >= 0})
        b = sorted(other)
        print(f"\nL2 partition of each SM (l2_partition_map.csv; %smid numbering): partition of SM 0 ({len(a)} SMs): {ranges(a)}; "
              f"other partition ({len(b)} SMs): {ranges(b)}")


def ranges(v):
    out, i = [], 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        out.append(f"{v[i]}-{v[j]}" if j > i else f"{v[i]}")
        i = j + 1
    return ", ".join(out)


def reach(points, frac, peak):
    """Smallest bytes-in-flight per SM at which the upper envelope of (x, GB/s) reaches frac*peak,
    interpolated linearly in log2(x) between the measured points."""
    bx = defaultdict(float)
    for x, g in points:
        bx[x] = max(bx[x], g)
    env = []
    best = 0.0
    for x in sorted(bx):
        best = max(best, bx[x])
        env.append((x, best))
    tgt = frac * peak
    prev = None
    for x, g in env:
        if g >= tgt:
            if prev is None or prev[1] >= tgt:
                return x
            (x0, g0) = prev
            t = (tgt - g0) / (g - g0)
            return 2 ** (math.log2(x0) + t * (math.log2(x) - math.log2(x0)))
        prev = (x, g)
    return float("nan")


def bandwidth(d):
    r = rows(d, "bw_inflight.csv")
    if not r:
        return
    print("\n### Bandwidth versus bytes in flight per SM (ncu, base clocks)\n")
    print("| level | variant | rate column | peak GB/s (where) | 50% at B/SM | 90% at B/SM | at 64 warps/SM, U=1 / U=4 |\n|---|---|---|---|---|---|---|")
    for level, variant, col in (("dram", "read", "GB_s"), ("dram", "read_cg", "GB_s"), ("dram", "write", "GB_s"), ("dram", "copy", "GB_s"),
                                ("l2", "read_cg", "GB_s"), ("l2", "read", "l2_GB_s")):
        pts = [(int(x["bytes_in_flight_per_sm"]), float(x[col]), x) for x in r if x["level"] == level and x["variant"] == variant and x.get(col)]
        if not pts:
            continue
        pk = max(pts, key=lambda p: p[1])
        peak = pk[1]
        where = f"{pk[2]['warps_per_sm']} warps, U={pk[2]['loads_in_flight_per_thread']}, B={pk[2]['block_threads']}"
        full = {x["loads_in_flight_per_thread"]: float(x[col]) for _, _, x in pts if x["warps_per_sm"] == "64" and x["block_threads"] == "256"}
        f64 = " / ".join(f"{full[u]:.0f}" if u in full else "-" for u in ("1", "4"))
        p2 = [(x, g) for x, g, _ in pts]
        print(f"| {level} | {variant} | {col} | {peak:.0f} ({where}) | {reach(p2, 0.5, peak):.0f} | {reach(p2, 0.9, peak):.0f} | {f64} |")


def launch(d):
    r = [x for x in rows(d, "launch_overhead.csv") if x["role"] == "measure"]
    if not r:
        return
    print("\n### Launch overhead (empty kernel, ncu gpu__time_duration)\n")
    print("| threads/block | 1 block (ns) | fit over grids >= 4224 blocks: fixed ns + ns per block | ns per full wave (SMs x blocks/SM) |\n|---|---|---|---|")
    by = defaultdict(list)
    for x in r:
        by[int(x["threads_per_block"])].append((int(x["blocks"]), float(x["time_ns"]), int(x["blocks_per_sm_max"])))
    nsm = 132
    for b, v in sorted(by.items()):
        one = med([t for g, t, _ in v if g == 1])
        big = [(g, t) for g, t, _ in v if g >= 4224]
        n = len(big)
        mx = sum(g for g, _ in big) / n; my = sum(t for _, t in big) / n
        slope = sum((g - mx) * (t - my) for g, t in big) / sum((g - mx) ** 2 for g, _ in big)
        icpt = my - slope * mx
        per_sm = v[0][2]
        print(f"| {b} | {one:.0f} | {icpt:.0f} + {slope:.3f} x blocks | {slope * nsm * per_sm:.0f} ({per_sm} blocks/SM) |")


def wavefronts(d):
    r = rows(d, "l1_wavefronts.csv")
    if not r:
        return
    ms = [("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "req"), ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sectors"),
          ("l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum", "t_out_wf"), ("l1tex__data_pipe_lsu_wavefronts.sum", "data_wf"),
          ("l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum", "data_wf_lgds"), ("l1tex__data_bank_conflicts_pipe_lsu_mem_gds_op_ld.sum", "bank_confl")]
    ms = [(m, s) for m, s in ms if m in r[0]]
    idx = {(x["pattern"], x["stride_elems"], x["offset_bytes"], x["warps"], x["warm"]): x for x in r}
    print("\n### L1 wavefronts per load instruction (one warp; cold = first load, warm = (9 loads - cold) / 8)\n")
    print("| pattern | stride | offset B | " + " | ".join(f"{s} cold/warm" for _, s in ms) + " |\n|" + "---|" * (3 + len(ms)))
    seen = set()
    for x in r:
        k = (x["pattern"], x["stride_elems"], x["offset_bytes"], "1")
        if k in seen or x["warps"] != "1":
            continue
        seen.add(k)
        c, w = idx.get(k + ("0",)), idx.get(k + ("1",))
        if not c or not w:
            continue
        cells = []
        for m, _ in ms:
            cv = float(c[m]); wv = (float(w[m]) - cv) / 8
            cells.append(f"{cv:g} / {wv:g}")
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
    # full grid = one warp times warps?
    bad = []
    for (p, s, o, wps, wm), x in idx.items():
        if wps == "1":
            continue
        one = idx.get((p, s, o, "1", wm))
        n = int(wps)
        for m, _ in ms:
            if one and abs(float(x[m]) - n * float(one[m])) > 0.01 * n * max(1, float(one[m])):
                bad.append((p, s, o, wm, m))
    print(f"\nfull grid ({r[-1]['warps']} warps) = warps x one-warp counts for every pattern and metric: {'yes' if not bad else 'no: ' + str(bad[:8])}")


def geometry(d):
    r = rows(d, "l1_geometry.csv")
    if not r:
        return
    print("\n### L1 geometry (cycles per load; L1 hit ~32, L2 ~250 at base clock)\n")
    for e in ("size_seq", "size_rand"):
        print(f"- {e}: " + ", ".join(f"{int(x['size_bytes']) // 1024} KiB {float(x['cycles_per_load']):.0f}" for x in r if x["experiment"] == e and int(x["size_bytes"]) >= 200 * 1024))
    st_rows = [x for x in r if x["experiment"] == "stride"]
    counts = sorted({int(x["lines"]) for x in st_rows})
    print("\n| stride \\ lines | " + " | ".join(map(str, counts)) + " |\n|" + "---|" * (1 + len(counts)))
    for s in sorted({int(x["stride_bytes"]) for x in st_rows}):
        cell = {int(x["lines"]): float(x["cycles_per_load"]) for x in st_rows if int(x["stride_bytes"]) == s}
        print(f"| {s} | " + " | ".join(f"{cell[c]:.0f}" if c in cell else "" for c in counts) + " |")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    latency(d)
    near_far(d)
    bandwidth(d)
    launch(d)
    wavefronts(d)
    geometry(d)


if __name__ == "__main__":
    main()
