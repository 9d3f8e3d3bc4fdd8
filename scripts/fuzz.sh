#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (AddressSanitizer, UBSan) into
# ${INFER_FUZZ_BUILD_DIR:-build-fuzz} and runs each for INFER_FUZZ_SECONDS
# (default 30) from its committed corpus: ctest label `fuzz` of that build.
# Part of the README's test command (scripts/test.sh); docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${INFER_FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${INFER_FUZZ_SECONDS:-30}"
if [ ! -f "$build_dir/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -G Ninja -S . -B "$build_dir" -DINFER_BUILD_FUZZERS=ON \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-gline-tables-only \
    -DCMAKE_C_FLAGS=-gline-tables-only -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
cmake -S . -B "$build_dir" -DINFER_FUZZ_SECONDS="$seconds" >/dev/null
ninja -C "$build_dir" fuzzers
cd "$build_dir"
ctest --output-on-failure -L fuzz -j2 "$@"
