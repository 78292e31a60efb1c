#!/usr/bin/env bash
# The Python package's tests: installs it (pip install ./python, maturin fetched from the package
# index) into a virtual environment under the cargo target folder (target/, or $CARGO_TARGET_DIR
# when set), then runs pytest against the release binary, whose JSON the package must reproduce.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
venv=$target/python-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade ./python pytest pandas
cargo build --release --quiet --bin gputraffic
GPUTRAFFIC_BIN="$target/release/gputraffic" "$venv/bin/python" -m pytest -q python/tests "$@"
