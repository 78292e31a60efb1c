#!/usr/bin/env bash
# The `.cu` path end to end on a machine without a GPU: installs nvcc from the package index
# (scripts/install-nvcc.sh) and runs the test that compiles tests/data/ptx/stencils.cu, lifts it
# and simulates it (tests/lift.rs; it is skipped where no nvcc is found).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(scripts/install-nvcc.sh)
PATH="$bin:$PATH" cargo test --release --test lift cuda_source_lifts_through_nvcc -- --nocapture
