#!/usr/bin/env bash
# The README's test command: set up, build, and run every test (lit, gtest,
# end to end, ONNX conformance). GPU tests skip cleanly without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir="${INFER_BUILD_DIR:-build}"
cd "$build_dir"
ctest --output-on-failure -j2 "$@"
