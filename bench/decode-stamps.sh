#!/usr/bin/env bash
# Where a batch-1 decode layer's attention spends its time, from the inside:
# builds kv_attention_test with -DINFER_KERNEL_STAMPS (thread 0 of each of
# infer_kv_decode's blocks records %globaltimer at its stages: entry, token
# found, before and after the wait for the qkv GEMV, q / k / v staged, the
# new key scored, the first key step in registers, scored and done, keys
# done, warps merged, output written; Common.cuh, INFER_KERNEL_STAMP) and runs
# its --stamps mode: a qkv GEMV, infer_kv_decode and an o_proj GEMV launched
# programmatically, 16 layers in a CUDA graph, at TinyLlama's and
# Llama-3-8B's head shapes. Times are microseconds after the qkv GEMV's last
# block ended (globaltimer ticks are ~0.26 us here). Needs nvcc and a GPU.
#
#   bench/decode-stamps.sh OUT_DIR [NVCC]
#
# Writes OUT_DIR/kv_attention_stamps (the binary) and OUT_DIR/decode-stamps.txt.
set -euo pipefail
out=$1; nvcc=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
"$nvcc" -std=c++17 -O2 -arch=sm_90a -I"$here" -DINFER_KERNEL_STAMPS -o "$out/kv_attention_stamps" \
  "$here/codegen/cuda/tests/kv_attention_test.cu"
"$out/kv_attention_stamps" --stamps | tee "$out/decode-stamps.txt"
