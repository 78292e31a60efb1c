#!/usr/bin/env bash
# Installs nvcc, ptxas and nvdisasm (the lifter reads the compiled code's load order off its
# SASS) from the package index (no GPU, no CUDA toolkit needed) into a virtual
# environment under the cargo target folder (target/, or $CARGO_TARGET_DIR when set), and prints the folder holding nvcc. `gputraffic` finds that folder by
# itself when run from the project (see docs/cuda.md, "Finding nvcc"); elsewhere pass --nvcc or put
# it on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(realpath -m "${CARGO_TARGET_DIR:-target}")/nvcc-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! ls "$venv"/lib/python*/site-packages/nvidia/cu*/bin/nvcc "$venv"/lib/python*/site-packages/nvidia/cu*/bin/nvdisasm >/dev/null 2>&1; then
  "$venv/bin/pip" install --quiet nvidia-cuda-nvcc nvidia-cuda-crt nvidia-cuda-runtime nvidia-cuda-cccl nvidia-cuda-nvdisasm >&2
fi
bin=$(dirname "$(ls "$venv"/lib/python*/site-packages/nvidia/cu*/bin/nvcc | sort | tail -n 1)")
"$bin/nvcc" --version >&2
echo "$bin"
