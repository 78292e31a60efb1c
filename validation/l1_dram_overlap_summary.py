#!/usr/bin/env python3
"""Tables of validation/l1_dram_overlap.cu's launches (tests/data/h200/l1_dram_overlap/B*/ncu.csv):
per launch D and W, the time, the L1's time at one wavefront per SM cycle (the SM clock ncu
measured), the L2's reads at the config's `l2_gbs` and the DRAM's at its `dram_read_gbs`, the time
over the largest of them and over the sum of the L1's and the DRAM's, and what the time exceeds
the L1's by, in DRAM times.

  validation/l1_dram_overlap_summary.py [DIR ...]   (default: every run there)
"""
import csv, io, pathlib, re, sys, tomllib

REPO = pathlib.Path(__file__).resolve().parent.parent
HW = tomllib.loads((REPO / "hw-configs" / "h200.toml").read_text())
SMS = HW["sm"]["count"]
DRAM_READ_GBS = HW["bandwidth"].get("dram_read_gbs", HW["bandwidth"]["dram_gbs"])
L2_GBS = HW["bandwidth"]["l2_gbs"]


def launches(path):
    text = path.read_text()
    rows = list(csv.reader(io.StringIO(text[text.index('"ID"'):])))
    head, by_id = rows[0], {}
    for r in rows[1:]:
        x = dict(zip(head, r))
        k = by_id.setdefault(int(x["ID"]), {"kernel": x["Kernel Name"]})
        k[x["Metric Name"]] = float(x["Metric Value"].replace(",", ""))
    for i, k in sorted(by_id.items()):
        d, w = map(int, re.search(r"k_mix<(\d+), (\d+)>", k["kernel"]).groups())
        yield i, d, w, k


def main():
    dirs = [pathlib.Path(a) for a in sys.argv[1:]] or sorted((REPO / "tests/data/h200/l1_dram_overlap").glob("b*"))
    for d in dirs:
        print(f"{d.name}: D W | time us | L1 us (wavefronts) | L2 us | DRAM us (read GB) | time / max | time / (L1 + DRAM) | (time - L1) / DRAM")
        for i, dd, w, k in launches(d / "ncu.csv"):
            if i == 0:
                continue  # the warm-up launch
            t = k["gpu__time_duration.sum"] * 1e-3
            clock = k["sm__cycles_elapsed.avg.per_second"]
            l1 = k["l1tex__data_pipe_lsu_wavefronts.sum"] / SMS / clock * 1e6
            dram = k["dram__bytes_read.sum"] / (DRAM_READ_GBS * 1e9) * 1e6
            l2 = k["lts__t_sectors_srcunit_tex_op_read.sum"] * 32 / (L2_GBS * 1e9) * 1e6
            big = max(l1, dram, l2)
            print(f"  {dd} {w:2d} | {t:8.1f} | {l1:8.1f} ({k['l1tex__data_pipe_lsu_wavefronts.sum']/1e6:6.1f} M) | {l2:6.1f} | {dram:7.1f} ({k['dram__bytes_read.sum']/1e9:5.2f}) | "
                  f"{t / big if big else float('nan'):5.2f} | {t / (l1 + dram) if l1 + dram else float('nan'):5.2f} | "
                  f"{(t - l1) / dram if dram > 1 else float('nan'):5.2f}")


if __name__ == "__main__":
    main()
