#!/usr/bin/env bash
# build-gemv-variants.sh NAME=GITREF... : the quantized GEMV kernel tests (quantized_gemm_test,
# quantized_fp8_gemv_test) of this tree, each built against the kernel headers of GITREF
# (codegen/cuda, runtime/cuda/abi, runtime/base), as NAME into .bundle/variants.tar.xz for
# quant-gemv-variants.sh (VARIANTS="NAME..."). A ref whose QuantizedGemvGeometry.h has no
# quantizedMmaGrid (the kernels before they were persistent) gets the tests' launches on
# ceil(n / 16) blocks. Needs nvcc (/usr/local/cuda/bin).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for spec in "$@"; do
  name=${spec%%=*} ref=${spec#*=}
  mkdir -p "$work/$name" "$work/out"
  git -C "$root" archive "$ref" codegen/cuda runtime/cuda/abi runtime/base compiler/artifact |
    tar x -C "$work/$name"
  for t in quantized_gemm_test quantized_fp8_gemv_test; do
    cp "$root/codegen/cuda/tests/$t.cu" "$work/$name/codegen/cuda/tests/$t.cu"
    grep -q quantizedMmaGrid "$work/$name/runtime/cuda/abi/QuantizedGemvGeometry.h" ||
      sed -i 's|quantizedMmaGrid(p.n)|unsigned((p.n + kQuantizedMmaRows - 1) / kQuantizedMmaRows)|' \
        "$work/$name/codegen/cuda/tests/$t.cu"
    "$nvcc" -std=c++17 -O2 -arch=sm_90a -I"$work/$name" -o "$work/out/${t}_$name" \
      "$work/$name/codegen/cuda/tests/$t.cu" 2> "$work/$name.$t.log" ||
      { cat "$work/$name.$t.log"; exit 1; }
    echo "built ${t}_$name from $ref"
  done
done 
mkdir -p "$root/.bundle"
tar cJf "$root/.bundle/variants.tar.xz" -C "$work/out" .
ls -l "$root/.bundle/variants.tar.xz"
