#!/usr/bin/env bash
# The lifted kernels against the hardware (docs/cuda.md, "Against the hardware"): lifts the
# stencils of tests/data/ptx/stencils.ptx (and new_kernels.ptx) in the compiled code's load order
# (needs ptxas and nvdisasm: scripts/install-nvcc.sh), puts in pitch and plane as the host
# computes them, and validates them on the measured launches of the H200 dev set and the H100
# sets in place of the shipped traces (histogram, whose address is loaded data, keeps its trace). About 15 minutes
# on 16 cores. Run from the repository root; writes docs/data/validation-lifted-*.json.
set -euo pipefail
G=${G:-"cargo run --release --quiet --"}
D=docs/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
host_layout() { sed -e '/^pitch = 0$/d' -e '/^plane = 0$/d' \
  -e 's/\bplane\b/((nx + 8) * (ny + 8))/g' -e 's/\bpitch\b/(nx + 8)/g'; }
for e in 'star<1>:star1' 'star<4>:star4' 'copy:copy' 'box27:box27'; do
  $G lift tests/data/ptx/stencils.ptx --entry "${e%%:*}" | host_layout > "$work/${e##*:}.toml"
done
$G lift tests/data/ptx/new_kernels.ptx --entry jacobi2d > "$work/jacobi2d.toml"
$G lift tests/data/ptx/new_kernels.ptx --entry transpose_naive > "$work/transpose-naive.toml"
$G lift tests/data/ptx/new_kernels.ptx --entry star7_coarse_yz --updates "nx * ny * nz" > "$work/star7-coarse-yz.toml"
$G lift tests/data/ptx/stencils.ptx --entry star1_zloop --grid "cdiv(nx, blockDim.x),cdiv(ny, blockDim.y),cdiv(nz, cz)" \
    --updates "nx * ny * nz" --extent "in=(nz + 8) * plane" --extent "out=(nz + 8) * plane" | host_layout > "$work/star1-zloop.toml"
$G lift tests/data/ptx/new_kernels.ptx --entry transpose_tiled --grid "nx / 32,ny / 32,1" --updates "nx * ny" \
    --extent "in=nx * ny" --extent "out=nx * ny" > "$work/transpose-tiled.toml"
$G lift tests/data/ptx/shared_stencil.ptx > "$work/jacobi2d-shared.toml"
python3 - "$work" <<'PY'
import csv, re, sys
work = sys.argv[1]
rows = list(csv.reader(open("tests/data/h200_dev_set.csv")))
k = rows[0].index("kernel")
with open(f"{work}/h200.csv", "w", newline="") as f:
    csv.writer(f).writerows([rows[0]] + [r[:k] + [f"{work}/{r[k]}.toml"] + r[k + 1:] for r in rows[1:]])
lifted = {"star1", "star4", "copy", "box27", "jacobi2d", "transpose-naive", "star7-coarse-yz",
          "star1-zloop", "transpose-tiled", "jacobi2d-shared"}
for src, dst in [("tests/data/h100/manifest.toml", "h100.toml"),
                 ("tests/data/h100/new_kernels/manifest.toml", "h100-new-kernels.toml"),
                 ("tests/data/h200/shared/transpose_manifest.toml", "h200-transpose.toml"),
                 ("tests/data/h200/shared/stencil_manifest.toml", "h200-shared-stencil.toml")]:
    text = re.sub(r'^trace = "([^"]+)"',
                  lambda m: f'trace = "{work}/{m.group(1)}.toml"' if m.group(1) in lifted else m.group(0),
                  open(src).read(), flags=re.M)
    open(f"{work}/{dst}", "w").write(text)
PY
$G validate --measured "$work/h200.csv" --hw h200 --format json --out $D/validation-lifted-h200.json
$G validate --measured tests/data/h100/ncu.csv --manifest "$work/h100.toml" --hw h100-sxm \
    --format json --out $D/validation-lifted-h100.json
$G validate --measured tests/data/h100/new_kernels/ncu.csv --manifest "$work/h100-new-kernels.toml" \
    --hw h100-sxm --format json --out $D/validation-lifted-h100-new-kernels.json
$G validate --measured tests/data/h200/shared/transpose_ncu.csv --manifest "$work/h200-transpose.toml" \
    --hw h200 --format json --out $D/validation-lifted-h200-transpose.json
$G validate --measured tests/data/h200/shared/stencil_ncu.csv --manifest "$work/h200-shared-stencil.toml" \
    --hw h200 --format json --out $D/validation-lifted-h200-shared-stencil.json
