#!/usr/bin/env python3
"""The "Model vs simulator" tables of docs/models.md (ernst2023 and layer-condition), regenerated.

    python3 docs/data/models_vs_sim.py BINARY

Simulates each launch with `simulate --compare MODEL --format json` and prints the two markdown
tables' rows: the 25-point star at the paper's 640x512 plane with nz = 128, the LBM and phase
field kernels at 256^3.
"""
import json
import subprocess
import sys

LAUNCHES = [
    ("ernst-25pt-r4", "a100-40gb", "64x4x4", 1), ("ernst-25pt-r4", "a100-40gb", "64x4x4", 2),
    ("ernst-25pt-r4", "a100-40gb", "16x2x32", 2), ("ernst-25pt-r4", "a100-40gb", "32x32x1", 1),
    ("ernst-25pt-r4", "a100-40gb", "512x2x1", 1), ("ernst-25pt-r4", "a100-40gb", "32x1x32", 1),
    ("ernst-25pt-r4", "a100-40gb", "8x8x8", 1), ("ernst-25pt-r4", "h200", "64x4x4", 1),
    ("ernst-25pt-r4", "h200", "32x32x1", 1), ("ernst-25pt-r4", "h200", "32x1x32", 1),
    ("ernst-lbm-d3q15", "a100-40gb", "32x4x4", 1), ("ernst-lbm-d3q15", "a100-40gb", "512x1x1", 1),
    ("ernst-lbm-d3q15", "a100-40gb", "8x1x64", 1),
    ("ernst-phasefield-7pt", "a100-40gb", "32x4x4", 1), ("ernst-phasefield-7pt", "a100-40gb", "512x1x1", 1),
]
LD, L2RD, DRAM_RD, DRAM_WR = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                              "lts__t_sectors_srcunit_tex_op_read.sum", "dram__sectors_read.sum",
                              "dram__sectors_write.sum")


def simulate(binary, kernel, hw, block, fold, model):
    domain = "640x512x128" if kernel == "ernst-25pt-r4" else "256x256x256"
    cmd = [binary, "simulate", "--kernel", kernel, "--hw", hw, "--block", block, "--domain", domain,
           "--compare", model, "--format", "json"]
    if fold > 1:
        cmd += ["--set", f"fold_z={fold}"]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main():
    binary = sys.argv[1]
    ernst, layer = [], []
    for kernel, hw, block, fold in LAUNCHES:
        label = f"{block} {fold}z" if fold > 1 else block
        e = simulate(binary, kernel, hw, block, fold, "ernst2023")
        lc = simulate(binary, kernel, hw, block, fold, "layer-condition")["compare"]["prediction"]
        p, sim = e["compare"]["prediction"], e["bytes_per_lup"]
        no_reuse = lc["element_bytes"] * (lc["d"] + 2 * lc["r"]) / lc["d"]
        fulfilled = lc["layer_condition_fulfilled"]
        ernst.append(
            f"| {kernel} | {hw} | {label} | {p['l1_cycles_per_warp']:.1f} | "
            f"{p['l1_load_bytes_per_lup']:.1f} / {sim[LD]:.1f} | "
            f"{p['l2_load_compulsory_bytes_per_lup']:.1f} / {e['compulsory']['l2_to_l1_read_bytes_per_lup']:.1f} | "
            f"{p['l2_load_bytes_per_lup']:.1f} / {sim[L2RD]:.1f} | {p['dram_load_compulsory_bytes_per_lup']:.1f} | "
            f"{p['dram_load_bytes_per_lup']:.1f} / {sim[DRAM_RD]:.1f} | "
            f"{p['dram_store_bytes_per_lup']:.1f} / {sim[DRAM_WR]:.1f} | "
            f"{no_reuse:.1f} ({'LC' if fulfilled else 'no LC'}: {lc['dram_load_bytes_per_lup']:.1f}) |")
        if kernel != "ernst-lbm-d3q15":
            layer.append(
                f"| {kernel} | {hw} | {label} | {lc['r']:.0f} | {lc['d']:.0f} | "
                f"{lc['max_plane_points']:.0f} | {lc['plane_points']:.0f} | {'yes' if fulfilled else 'no'} | "
                f"{no_reuse:.1f} / {lc['dram_load_bytes_per_lup']:.1f} | {sim[DRAM_RD]:.1f} |")
    print("\n".join(ernst))
    print()
    print("\n".join(layer))


if __name__ == "__main__":
    main()
