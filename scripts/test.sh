#!/usr/bin/env bash
# The README's test command: set up, build, and run every test (lit, gtest,
# end to end, ONNX conformance), then each fuzz target for a bounded time
# under ASan/UBSan (scripts/fuzz.sh). GPU tests skip cleanly without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir="${INFER_BUILD_DIR:-build}"
cd "$build_dir"
# lit's own summary first (ctest runs it again as the test `lit`, label lit).
/usr/lib/llvm-22/bin/lit -s test
ctest --output-on-failure -j2 "$@"
cd ..
scripts/fuzz.sh
