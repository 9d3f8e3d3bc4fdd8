#!/usr/bin/env bash
# The runtime links neither LLVM nor MLIR: no such shared library (ldd) and no
# llvm:: or mlir:: symbol linked in statically (nm).
# usage: no-llvm.sh BINARY...
set -eu
for binary in "$@"; do
  if ldd "$binary" | grep -Ei 'libLLVM|libMLIR|libclang'; then
    echo "FAIL: $binary loads LLVM/MLIR libraries"; exit 1
  fi
  if nm -C "$binary" | grep -E '(llvm|mlir)::' | head -5 | grep .; then
    echo "FAIL: $binary contains LLVM/MLIR code"; exit 1
  fi
  echo "ok: $binary has no LLVM or MLIR"
done
