#!/usr/bin/env bash
# NVRTC's time for the kernels a tinyllama-1.1b artifact names: one program
# (as infer-compile compiles them) against six programs with a share each,
# compiled at once in separate processes (bench/results/tinyllama-1.1b-
# compile.md, session 20). Run from the repository root; needs g++ and the
# CUDA toolkit (CUDA_HOME, default /usr/local/cuda).
#
#   [NVRTC_SPLITS="4 16"] bench/nvrtc/compare.sh OUT_DIR   (also one program
#                                                        at those split counts)
set -euo pipefail
out=$1; cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
g++ -std=c++17 -O1 -o "$out/nvrtc_time" bench/nvrtc/nvrtc_time.cpp -I"$cuda/include" \
  -L"$cuda/lib64" -lnvrtc -Wl,-rpath,"$cuda/lib64"
headers='#include "codegen/cuda/kernels/Common.cuh"
#include "codegen/cuda/kernels/RowKernels.cuh"
#include "codegen/cuda/kernels/Attention.cuh"
#include "codegen/cuda/kernels/KvAttention.cuh"
#include "codegen/cuda/kernels/KvPrefillWgmma.cuh"
#include "codegen/cuda/kernels/Sampling.cuh"
#include "codegen/cuda/kernels/GemvRows.cuh"'
# program NAME INSTANTIATION...: a source with those explicit instantiations.
program() {
  local name=$1; shift
  { echo "$headers"; echo 'namespace infer { namespace kernels { using bf = __nv_bfloat16;'
    for kernel in "$@"; do echo "template __global__ void $kernel;"; done; echo '}}'; } > "$out/$name.cu"
}
attention='infer_attention<bf, 64>(AttentionParams)'
prefill='infer_kv_prefill_attention<bf, 64>(KvAttentionParams)'
kv=('infer_kv_attention<bf>(KvAttentionParams)' 'infer_kv_write<bf>(KvAttentionParams)')
gemv=('infer_gemv<bf>(GemvParams)' 'infer_gemv_rows<bf, 0, false>(GemvParams)')
rows=('infer_sample<bf>(SampleParams)' 'infer_rms_norm<bf, bf>(RmsNormParams)'
      'infer_embedding<bf, bf>(EmbeddingParams)' 'infer_gated_activation<bf>(GatedActivationParams)')
decode=('infer_kv_decode<bf, float, 64>(RotaryKvWriteParams)' 'infer_rotary<bf, float>(RotaryParams)'
        'infer_rotary_kv_write<bf, float>(RotaryKvWriteParams)'
        'infer_gemv_rows<bf, 1, false>(GemvParams)' 'infer_gemv_rows<bf, 1, true>(GemvParams)')
program all "$attention" "$prefill" "${kv[@]}" "${gemv[@]}" "${rows[@]}" "${decode[@]}"
program part1 "$attention"; program part2 "$prefill"; program part3 "${kv[@]}"
program part4 "${gemv[@]}"; program part5 "${rows[@]}"; program part6 "${decode[@]}"
export REPO=$(pwd)
rm -f "$out/phases.csv"
echo "one program, --split-compile=0:"
( time "$out/nvrtc_time" "$out/all.cu" --split-compile=0 "-time=$out/phases.csv" ) 2>&1
cat "$out/phases.csv"
for threads in ${NVRTC_SPLITS:-}; do
  echo "one program, --split-compile=$threads:"
  ( time "$out/nvrtc_time" "$out/all.cu" --split-compile=$threads ) 2>&1
done
echo "six programs at once, --split-compile=0 each:"
( time ( for i in 1 2 3 4 5 6; do "$out/nvrtc_time" "$out/part$i.cu" --split-compile=0 & done; wait ) ) 2>&1
