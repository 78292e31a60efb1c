#!/usr/bin/env python3
"""Warp cycles per issued instruction by state, from validation/warp_states.sh's ncu exports
(issue 53, item 3: the time a warp spends on its own instructions).

Nsight Compute's `smsp__average_warps_issue_stalled_REASON_per_issue_active.ratio` is the number
of warps in state REASON per cycle in which the scheduler issued, i.e. the warp cycles spent in
that state per issued instruction; over all states (`selected` included) they sum to
`smsp__average_warp_latency_per_inst_issued.ratio`. The states fall in three groups:
- own: the warp's own path, which it would take alone: `selected` (its issue cycle), `wait`
  (a fixed-latency dependency), `branch_resolving`, `no_instruction`, `dispatch_stall`, `misc`;
- memory: `long_scoreboard` (global or local memory), `short_scoreboard` (shared memory and the
  other MIO results), `lg_throttle`, `mio_throttle`, `tex_throttle`, `membar`, `drain`, `imc_miss`;
- others: `not_selected` and `math_pipe_throttle` (other warps took the slot or the pipe),
  `barrier`, `sleeping`.

    python3 validation/warp_states_summary.py DIR [--launches]

prints, per program (DIR/PROGRAM.csv) and over all, the median and range of the own cycles per
instruction, of the issue cycle and fixed-latency waits alone (`selected` + `wait`: what the
compiled code's stall counts set, validation/sass_stalls.py), and of the other two groups;
`--launches` one line per launch.
"""
import csv
import glob
import os
import statistics
import sys

OWN = ["selected", "wait", "branch_resolving", "no_instruction", "dispatch_stall", "misc"]
MEMORY = ["long_scoreboard", "short_scoreboard", "lg_throttle", "mio_throttle", "tex_throttle",
          "membar", "drain", "imc_miss"]
OTHERS = ["not_selected", "math_pipe_throttle", "barrier", "sleeping"]
PREFIX = "smsp__average_warps_issue_stalled_"
SUFFIX = "_per_issue_active.ratio"


def launches(path):
    """One dict per profiled launch: its kernel, block, the states' cycles per instruction."""
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(line for line in f if line.startswith('"')):
            x = rows.setdefault(r["ID"], {"kernel": r["Kernel Name"].split("(")[0], "block": r["Block Size"]})
            name, value = r["Metric Name"], r["Metric Value"].replace(",", "")
            try:
                value = float(value)
            except ValueError:
                continue
            if name.startswith(PREFIX) and name.endswith(SUFFIX):
                x[name[len(PREFIX):-len(SUFFIX)]] = value
            else:
                x[name] = value
    return [rows[k] for k in sorted(rows, key=int)]


def group(x, names):
    return sum(x.get(n, 0.0) for n in names)


def line(label, xs):
    def stat(values):
        return f"{statistics.median(values):5.2f} ({min(values):5.2f}-{max(values):5.2f})"
    return (f"{label:18} n {len(xs):3}  own {stat([group(x, OWN) for x in xs])}  selected + wait "
            f"{stat([group(x, ['selected', 'wait']) for x in xs])}  memory {stat([group(x, MEMORY) for x in xs])}"
            f"  others {stat([group(x, OTHERS) for x in xs])}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    everything = []
    for path in sorted(glob.glob(os.path.join(args[0], "*.csv"))):
        xs = [x for x in launches(path) if "selected" in x]
        if not xs:
            continue
        everything += xs
        print(line(os.path.basename(path)[:-4], xs))
        if "--launches" in sys.argv:
            for x in xs:
                print(f"    {x['kernel'][:22]:22} {x['block']:14} own {group(x, OWN):5.2f} wait {x.get('wait', 0):5.2f}"
                      f" memory {group(x, MEMORY):6.2f} others {group(x, OTHERS):6.2f}"
                      f" latency/inst {x.get('smsp__average_warp_latency_per_inst_issued.ratio', 0):6.2f}")
    if everything:
        print(line("all", everything))


if __name__ == "__main__":
    main()
