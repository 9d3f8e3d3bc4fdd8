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
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/test/fuzz" "$stage/test/tokenizer/fixtures"
system_libs='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libdl\.so\.2|librt\.so\.1|libpthread\.so\.0|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libz\.so\.1)$'
for target in "$@"; do
  grep -q '^INFER_STATIC_LLVM:BOOL=ON' "$build/CMakeCache.txt" ||
    { echo "make-fuzz-bundle: $build is not configured with INFER_STATIC_LLVM=ON" >&2; exit 1; }
  cp "$build/bin/$target" "$stage/bin/"
  strip --strip-debug "$stage/bin/$target"
  patchelf --set-rpath '$ORIGIN/../lib' "$stage/bin/$target"
  ldd "$build/bin/$target" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
    [[ "$soname" =~ $system_libs ]] && continue
    [ -f "$stage/lib/$soname" ] || cp -L "$path" "$stage/lib/$soname"
  done
done
cp test/fuzz/campaign.sh "$stage/test/fuzz/"
for target in "$@"; do cp -r "test/fuzz/corpus/$target" "$stage/test/fuzz/corpus-$target"; done
mkdir -p "$stage/test/fuzz/corpus"
for target in "$@"; do mv "$stage/test/fuzz/corpus-$target" "$stage/test/fuzz/corpus/$target"; done
for t in llama2 gpt2 gemma; do cp -r "test/tokenizer/fixtures/$t" "$stage/test/tokenizer/fixtures/"; done
tar cJf "$out" -C "$stage" .
ls -la "$out"
