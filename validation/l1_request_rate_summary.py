#!/usr/bin/env python3
"""Requests and data-stage wavefronts per SM cycle of validation/l1_request_rate.cu's launches
(every load an L1 hit), from the directory validation/l1_request_rate.sh wrote:

    python3 validation/l1_request_rate_summary.py tests/data/h100/l1_request_rate

One line a launch: the launch line (pattern, warps a block, blocks an SM, rounds), then load
requests, wavefronts and warp instructions per SM cycle (cycles: sm__cycles_elapsed.avg, the
SMs' count read from the launch's blocks)."""
import collections
import csv
import sys

PATTERNS = ["coalesced float", "broadcast float", "double, made a float", "coalesced float4",
            "gemm-like", "floats 2 apart", "coalesced float + FMAs", "broadcast + FMAs",
            "2 broadcast, 2 coalesced", "gemm-like, one line", "doubles summed as doubles"]


def main(d):
    rows = [r for r in csv.reader(open(f"{d}/ncu.csv")) if len(r) > 10]
    h = rows[0]
    iid, name, value = h.index("ID"), h.index("Metric Name"), h.index("Metric Value")
    m = collections.defaultdict(dict)
    for r in rows[1:]:
        try:
            m[int(r[iid])][r[name]] = float(r[value].replace(",", ""))
        except ValueError:
            pass
    lines = {int(l.split()[0]): l.split()[1:] for l in open(f"{d}/run.log") if l.strip()}
    print("id  pattern                  warps/SM  requests/cycle  wavefronts/cycle  instructions/cycle  us")
    for i in sorted(m):
        p, warps, per_sm, _ = map(int, lines[i])
        c = m[i]
        sms = c["sm__ctas_launched.sum"] / per_sm
        cycles = c["sm__cycles_elapsed.avg"] * sms
        print(f"{i:<3} {PATTERNS[p]:24} {warps * per_sm:8}  {c['l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum'] / cycles:14.3f}"
              f"  {c['l1tex__data_pipe_lsu_wavefronts.sum'] / cycles:16.3f}  {c['smsp__inst_executed.sum'] / cycles:18.3f}"
              f"  {c['gpu__time_duration.sum'] / 1e3:6.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
