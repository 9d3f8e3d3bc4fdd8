#!/usr/bin/env bash
# tools/make-fuzz-bundle.sh BUILD_DIR OUT.tar.xz TARGET...
# Packs fuzz targets built with INFER_STATIC_LLVM=ON (no libLLVM/libMLIR to ship; configure as
# scripts/fuzz.sh does, plus -DINFER_STATIC_LLVM=ON) for a campaign on another machine
# (bench/device/fuzz-on-device.sh): bin/TARGET with the shared libraries they need that a stock
# Ubuntu 24.04 lacks in lib/ (rpath $ORIGIN/../lib), test/fuzz/campaign.sh with the committed
# corpora, and the tokenizer fixtures the tokenizer target loads (INFER_TOKENIZER_FIXTURES).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1; out=$(realpath -m "$2"); shift 2
. tools/bundle-libs.sh
grep -q '^INFER_STATIC_LLVM:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "make-fuzz-bundle: $build is not configured with INFER_STATIC_LLVM=ON" >&2; exit 1; }
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/test/fuzz/corpus" "$stage/test/tokenizer/fixtures"
for target in "$@"; do
  cp "$build/bin/$target" "$stage/bin/"
  strip --strip-debug "$stage/bin/$target"
  patchelf --set-rpath '$ORIGIN/../lib' "$stage/bin/$target"
  cp -r "test/fuzz/corpus/$target" "$stage/test/fuzz/corpus/"
done
copy_needed_libs "$stage/lib" "$stage"/bin/*
cp test/fuzz/campaign.sh "$stage/test/fuzz/"
for t in llama2 gpt2 gemma; do cp -r "test/tokenizer/fixtures/$t" "$stage/test/tokenizer/fixtures/"; done
tar cJf "$out" -C "$stage" .
ls -la "$out"
