#!/usr/bin/env python3
"""Joins a microbenchmark's runs file with its ncu export into one tidy CSV.

    micro_join.py KIND OUT.csv RUNS.csv NCU.csv [RUNS2.csv NCU2.csv ...]

RUNS.csv: what the benchmark wrote, one row per profiled launch in launch order (lines starting
with # are skipped). NCU.csv: `ncu --import R.ncu-rep --csv --print-units base` (long format: one
row per launch and metric). Row i of RUNS pairs with the i-th launch ID of NCU; the row's `kernel`
must occur in ncu's kernel name. Output: the RUNS columns, then time_ns (gpu__time_duration.sum),
clock_mhz (sm__cycles_elapsed.avg.per_second / 1e6), every other metric under its ncu name, then
columns derived per KIND:
  latency, geometry: ns_per_load = cycles_per_load / clock_mhz * 1000
  bw:                GB_s = bytes_moved / time_ns (what the kernel asked for, L1 hits included),
                     l2_GB_s = lts__t_sectors_srcunit_tex_op_read.sum * 32 / time_ns (L1 misses read from L2),
                     dram_GB_s = (dram__bytes_read.sum + dram__bytes_write.sum) / time_ns
  launch, wavefronts, nearfar: none
Standard library only.
"""
import csv
import sys


def read_runs(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    head, body = rows[0], rows[1:]
    return head, [dict(zip(head, r)) for r in body]


def read_ncu(path):
    launches = {}  # id -> {"kernel": name, metric: value}
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # drop ncu's "==PROF==" chatter, if any
    for r in csv.DictReader(lines):
        i = int(r["ID"])
        d = launches.setdefault(i, {"kernel": r["Kernel Name"]})
        v = r["Metric Value"].replace(",", "")
        d[r["Metric Name"]] = v
    return [launches[i] for i in sorted(launches)]


def main():
    if len(sys.argv) < 5 or len(sys.argv) % 2 == 0:
        sys.exit(__doc__)
    kind, out = sys.argv[1], sys.argv[2]
    pairs = [(sys.argv[i], sys.argv[i + 1]) for i in range(3, len(sys.argv), 2)]
    head, metrics, rows = [], [], []
    for runs_path, ncu_path in pairs:
        h, runs = read_runs(runs_path)
        prof = read_ncu(ncu_path)
        if len(runs) != len(prof):
            sys.exit(f"{runs_path}: {len(runs)} runs but {ncu_path}: {len(prof)} profiled launches")
        for c in h:
            if c not in head:
                head.append(c)
        for run, p in zip(runs, prof):
            if run.get("kernel", "") not in p["kernel"]:
                sys.exit(f"{runs_path}: run kernel {run.get('kernel')!r} but ncu launch is {p['kernel']!r}")
            row = dict(run)
            for m, v in p.items():
                if m == "kernel":
                    continue
                if m == "gpu__time_duration.sum":
                    row["time_ns"] = v
                elif m == "sm__cycles_elapsed.avg.per_second":
                    row["clock_mhz"] = f"{float(v) / 1e6:.2f}"
                else:
                    if m not in metrics:
                        metrics.append(m)
                    row[m] = v
            if kind in ("latency", "geometry") and row.get("clock_mhz") and row.get("cycles_per_load"):
                row["ns_per_load"] = f"{float(row['cycles_per_load']) / float(row['clock_mhz']) * 1000:.3f}"
            if kind == "bw" and row.get("time_ns") and row.get("bytes_moved"):
                t = float(row["time_ns"])
                row["GB_s"] = f"{float(row['bytes_moved']) / t:.2f}"
                if row.get("lts__t_sectors_srcunit_tex_op_read.sum"):
                    row["l2_GB_s"] = f"{float(row['lts__t_sectors_srcunit_tex_op_read.sum']) * 32 / t:.2f}"
                if row.get("dram__bytes_read.sum") and row.get("dram__bytes_write.sum"):
                    row["dram_GB_s"] = f"{(float(row['dram__bytes_read.sum']) + float(row['dram__bytes_write.sum'])) / t:.2f}"
            rows.append(row)
    cols = head + [c for c in ("time_ns", "clock_mhz") if any(c in r for r in rows)] + sorted(metrics)
    cols += [c for c in ("ns_per_load", "GB_s", "l2_GB_s", "dram_GB_s") if any(c in r for r in rows)]
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([r.get(c, "") for c in cols])
    print(f"{out}: {len(rows)} rows")


if __name__ == "__main__":
    main()
