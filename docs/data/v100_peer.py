#!/usr/bin/env python3
"""Compare the simulation with Ernst et al.'s V100 star-stencil measurements (docs/validation.md,
"V100 peer data").

The measurements are published by others (github te42kyfo/warpspeed) and are not in this
repository: pass the folder that holds v100-star3d-r4-blockshapes.csv and
v100-star3d-r2-blockshapes.csv (in this workspace ../shared/measurements/external).

    python3 docs/data/v100_peer.py BINARY EXTERNAL_DIR OUT_DIR [--traces DIR] [--hw CONFIG] [--threads N]

Runs two sweeps on the shipped `v100` config, at half or less of the measured depth to keep them
short (bytes per lattice update are compared, which the depth barely moves once a launch has
many waves): the 25-point set (`ernst-25pt-r4`, the 40 shapes CUDA can launch, 632x504x256) and
the 13-point set (`ernst-13pt-r2`, 30 shapes x fold_z 1, 2, 4, 596x596x192). Prints the median and
worst relative error and the Spearman rank correlation of L2 reads from the L1 and of DRAM reads,
and for the 25-point set, whose times were measured, the block shape the time model picks.
`--traces DIR` reads the two traces from DIR, `--hw CONFIG` the GPU from a file, instead of the
binary's shipped ones.
"""
import argparse
import csv
import statistics
import subprocess
from pathlib import Path

L2 = "lts__t_sectors_srcunit_tex_op_read.sum_bytes_per_lup"
DRAM = "dram__sectors_read.sum_bytes_per_lup"


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    return cov / (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5


def sweep(binary, kernel, hw, shapes, domain, sets, out, threads):
    cmd = [binary, "sweep", "--kernel", kernel, "--hw", hw, "--blocks", ",".join(shapes),
           "--domains", domain, "--models", "none", "--out", str(out), "--force"]
    for s in sets:
        cmd += ["--set", s]
    if threads:
        cmd += ["--threads", threads]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return list(csv.DictReader(open(out)))


def report(title, pairs):
    """pairs: [(label, measured L2, simulated L2, measured DRAM, simulated DRAM)]"""
    print(f"\n{title} ({len(pairs)} launches)")
    for name, m, s in (("L2 reads from L1", 1, 2), ("DRAM reads", 3, 4)):
        errors = [(p[s] - p[m]) / p[m] for p in pairs]
        worst = max(range(len(pairs)), key=lambda i: abs(errors[i]))
        print(f"  {name}: median {100 * statistics.median(abs(e) for e in errors):.1f}%, "
              f"worst {100 * errors[worst]:+.1f}% ({pairs[worst][0]}), "
              f"Spearman {spearman([p[m] for p in pairs], [p[s] for p in pairs]):.2f}")
    print("  launch: L2 measured, simulated; DRAM measured, simulated (B/LUP)")
    for p in pairs:
        print(f"    {p[0]}: {p[1]:.1f} {p[2]:.1f} ({100 * (p[2] - p[1]) / p[1]:+.0f}%); "
              f"{p[3]:.1f} {p[4]:.1f} ({100 * (p[4] - p[3]) / p[3]:+.0f}%)")


def time_report(times):
    """times: [(shape, measured s, predicted s at the measured depth)]: the model's pick."""
    fastest = min(t[1] for t in times)
    by_prediction = sorted(times, key=lambda t: t[2])
    errors = [abs(t[2] - t[1]) / t[1] for t in times]
    print(f"  time: the model picks {by_prediction[0][0]}, at {100 * fastest / by_prediction[0][1]:.1f}% "
          f"of the fastest ({min(times, key=lambda t: t[1])[0]}); top 3 "
          f"{100 * fastest / min(t[1] for t in by_prediction[:3]):.1f}%; Spearman "
          f"{spearman([t[1] for t in times], [t[2] for t in times]):.2f}; median |time error| "
          f"{100 * statistics.median(errors):.1f}% (predictions scaled from 256 to 504 layers)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("external", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--traces", type=Path)
    parser.add_argument("--hw", default="v100")
    parser.add_argument("--threads")
    args = parser.parse_args()
    binary, external, out_dir, threads = args.binary, args.external, args.out_dir, args.threads
    out_dir.mkdir(parents=True, exist_ok=True)

    def kernel(name):
        return str(args.traces / f"{name}.toml") if args.traces else name

    rows = [r for r in csv.DictReader(open(external / "v100-star3d-r4-blockshapes.csv"))
            if int(r["bz"]) <= 64]
    shapes = [f"{r['bx']}x{r['by']}x{r['bz']}" for r in rows]
    sim = {f"{r['block_x']}x{r['block_y']}x{r['block_z']}": r
           for r in sweep(binary, kernel("ernst-25pt-r4"), args.hw, shapes, "632x504x256", [],
                          out_dir / "v100-25pt.csv", threads)}
    report("25-point star, range 4", [
        (s, float(r["meas_l2_read_B_per_lup"]), float(sim[s][L2]),
         float(r["meas_dram_read_B_per_lup"]), float(sim[s][DRAM])) for s, r in zip(shapes, rows)])

    time_report([(s, float(r["meas_time_ms_derived"]) * 1e-3, float(sim[s]["time_predicted_s"]) * 504 / 256)
                 for s, r in zip(shapes, rows)])

    rows = list(csv.DictReader(open(external / "v100-star3d-r2-blockshapes.csv")))
    shapes = sorted({f"{r['bx']}x{r['by']}x{r['bz']}" for r in rows})
    sim = {(f"{r['block_x']}x{r['block_y']}x{r['block_z']}", r["param_fold_z"]): r
           for r in sweep(binary, kernel("ernst-13pt-r2"), args.hw, shapes, "596x596x192", ["fold_z=1,2,4"],
                          out_dir / "v100-13pt.csv", threads)}
    pairs = []
    for r in rows:
        key = (f"{r['bx']}x{r['by']}x{r['bz']}", r["fold_z"])
        pairs.append((f"{key[0]} fold {key[1]}", float(r["meas_l2_read_B_per_lup"]), float(sim[key][L2]),
                      float(r["meas_dram_read_B_per_lup"]), float(sim[key][DRAM])))
    report("13-point star, range 2", pairs)
    for fold in ("1", "2", "4"):
        report(f"13-point star, fold_z = {fold}", [p for p in pairs if p[0].endswith(f"fold {fold}")])


if __name__ == "__main__":
    main()
