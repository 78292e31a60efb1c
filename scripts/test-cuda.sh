#!/usr/bin/env bash
# The `.cu` path end to end on a machine without a GPU: installs nvcc from the package index
# (scripts/install-nvcc.sh) and runs what needs it:
# - the test that compiles tests/data/ptx/stencils.cu, lifts it and simulates it (tests/lift.rs);
# - the Python package's Kernel.from_cuda test (python/tests; python/test.sh installs the package);
# - examples/python/pystencils_rank.py, with pystencils installed into the same virtual
#   environment, pinned (the last release for Python 3.9 to 3.11).
# Each of these is skipped, saying so, where no nvcc is found; here nvcc is always there.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(scripts/install-nvcc.sh)
PATH="$bin:$PATH" cargo test --release --test lift cuda_source_lifts_through_nvcc -- --nocapture
PATH="$bin:$PATH" python/test.sh -k from_cuda -rs
venv=$(realpath -m "${CARGO_TARGET_DIR:-target}")/python-venv
"$venv/bin/python" -m pip install --quiet "pystencils==1.3.7"
PATH="$bin:$PATH" "$venv/bin/python" examples/python/pystencils_rank.py
