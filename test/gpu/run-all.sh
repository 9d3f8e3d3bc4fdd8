#!/usr/bin/env bash
# Runs every GPU test (the ctest label `gpu`) with the tools in BIN_DIR, e.g.
# the relocatable bundle's bin/ on the GPU machine, which has no build tree:
#
#   test/gpu/run-all.sh BIN_DIR MODELS_DIR [KERNEL_TEST_DIR [MODEL...]]
#
# With MODEL names (e.g. tiny-gemma2) only those models' checks run (their
# goldens and greedy generate; no sanitizers, switches, tuning cache or
# kernel tests): a short run for the models a change touched. The name
# `quant` stands for the quantized compiles' checks, `kv-fp8` for the FP8 KV
# cache's alone, `tune` for infer-compile --tune's, `fusions` for tiny-llama's greedy generate under each runtime
# switch and each kernel-fusion compile flag.
#
# Each model is compiled once per dtype (--target cuda) and checked on both
# golden inputs and for the same bits in five runs of a 7-token forward, then
# run under compute-sanitizer (memcheck, racecheck and
# synccheck on bf16, initcheck on fp32); greedy generation runs through the
# step program; the nvcc-built kernel tests in KERNEL_TEST_DIR run last, alone
# (they time kernels). The models' checks run side by side (one job per
# model and per generate group, each with its own log, printed in order when
# all are done): the sanitizers take minutes one after another. Prints one
# line per check and a summary; exits 1 if any check failed.
set -uo pipefail
bin=$1; models=$2; kernels=${3:-}; only=("${@:4}")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
results=$tmp/results; : > "$results"
# One line per check (its exit status): appends of a few bytes do not interleave.
record() { echo "$1" >> "$results"; }
check() { python3 "$here/check_gpu.py" --infer-compile "$bin/infer-compile" --infer-run "$bin/infer-run" "$@"; record $?; }
generate() { python3 "$here/../generate/check_generate.py" --infer-compile "$bin/infer-compile" \
  --infer-run "$bin/infer-run" --device cuda "$@"; record $?; }

# Forward goldens and (unless the second argument is "no-sanitizers") sanitizers of one model.
model_checks() {
  local model=$1 base=$models/$1 dtype input tool artifact sanitizers=${2:-}
  for dtype in fp32 bf16; do
    artifact=$tmp/$model.$dtype.infer
    if ! "$bin/infer-compile" "$base.onnx" -o "$artifact" --target cuda --dtype $dtype > "$tmp/$model.compile.log" 2>&1; then
      echo "FAIL: compile $model $dtype"; cat "$tmp/$model.compile.log"; record 1; continue
    fi
    for input in 0 1; do
      check --model "$base.onnx" --input "$base.in$input.npy" --golden "$base.out$input.npy" \
        --dtype $dtype --artifact "$artifact"
    done
    # Run-to-run determinism of a 7-token forward (the decode GEMV's k splits).
    check --model "$base.onnx" --input "$base.in0.npy" --golden "$base.out0.npy" \
      --dtype $dtype --artifact "$artifact" --first-row --repeat 5
  done
  [ "$sanitizers" = no-sanitizers ] && return
  # initcheck on fp32 (see test/gpu/CMakeLists.txt: bf16 cuBLASLt outputs are
  # reported as uninitialized), the others on bf16.
  for tool in memcheck racecheck synccheck initcheck; do
    dtype=bf16; [ $tool = initcheck ] && dtype=fp32
    check --model "$base.onnx" --input "$base.in0.npy" --golden "$base.out0.npy" --dtype $dtype \
      --artifact "$tmp/$model.$dtype.infer" --sanitizer $tool
  done
}

# Greedy generation through the step program on the GPU (fp32: everything;
# bf16: the first 8 golden steps of tiny-llama and tiny-qwen2).
generate_checks() {
  local model=$1 base=$models/$1
  echo "generate $model fp32:"; generate --model "$base.onnx" --greedy "$base.greedy.json" --dtype fp32 \
    --inputs "$base.in0.npy" "$base.in1.npy"
  case $model in tiny-llama|tiny-qwen2)
    echo "generate $model bf16:"; generate --model "$base.onnx" --greedy "$base.greedy.json" --dtype bf16 \
      --golden-steps 8 --golden-only --compare-prefill --compare-rows;;
  esac
}

# The same with the runtime switches beyond the defaults: programmatic dependent
# launch in prefill steps too (INFER_PDL=1), the driver's shared-memory carveout
# per kernel (INFER_SMEM_CARVEOUT=-1), the step's metadata
# uploaded, a step ahead's tokens fed and the tokens copied back by cuMemcpy on
# the step's stream instead of the upload stream, the embedding's feed and
# mapped memory (INFER_UPLOAD_STREAM=0), and prefill steps launch by launch even
# when their shape comes again (INFER_PREFILL_GRAPHS=0).
switch_checks() {
  local setting=$1 base=$models/tiny-llama
  export "$setting"
  echo "generate tiny-llama fp32, $setting:"; generate --model "$base.onnx" \
    --greedy "$base.greedy.json" --dtype fp32 --inputs "$base.in0.npy" "$base.in1.npy"
  echo "generate tiny-llama bf16, $setting:"; generate --model "$base.onnx" \
    --greedy "$base.greedy.json" --dtype bf16 --golden-steps 8 --golden-only --compare-prefill
}

# And with the kernel fusions the compile decides (docs/exec.md) beyond the
# defaults, as test/gpu/CMakeLists.txt's gpu.generate.tiny-llama.*.fuse-* and
# .no-* tests: the rotary folded into the KV write, decode steps on three
# kernels, batch-1 decode's qkv GEMV and attention as two, the sampler scanning
# the logits, the identity gather launched, no GEMM folding its neighbours,
# decode steps of 3-8 tokens on infer_gemv instead of the tensor-core GEMV.
fusion_checks() {
  local flag=$1 base=$models/tiny-llama
  echo "generate tiny-llama fp32, $flag:"; generate --model "$base.onnx" \
    --greedy "$base.greedy.json" --dtype fp32 --inputs "$base.in0.npy" "$base.in1.npy" \
    --compile-arg="$flag"
  echo "generate tiny-llama bf16, $flag:"; generate --model "$base.onnx" \
    --greedy "$base.greedy.json" --dtype bf16 --golden-steps 8 --golden-only --compare-prefill \
    --compile-arg="$flag"
}

# infer-compile --tune: records, the database, the same bits in two processes.
tune_check() {
  python3 "$here/check_tune.py" --infer-compile "$bin/infer-compile" \
    --infer-run "$bin/infer-run" --model "$models/tiny-llama.onnx" \
    --input "$models/tiny-llama.in0.npy"; record $?
}

# Quantized compiles (kernels/QuantizedGemm.cuh), as test/gpu/CMakeLists.txt's gpu.quant.* and
# gpu.prequantized.* tests: forwards against ONNX Runtime's QDQ reference, pre-quantized models
# against ONNX Runtime, AWQ, greedy text the same as on the cpu backend.
# The gpu.kv-fp8.* tests: the FP8 KV cache against ONNX Runtime with K and V through E4M3
# (test/gpu/CMakeLists.txt). Part of quant_checks; alone as the name `kv-fp8`.
kv_fp8_checks() {
  local root=$here/../.. model dtype base
  for model in tiny-llama tiny-gpt2 tiny-gemma2 tiny-falcon-7b kjv-tiny; do
    case $model in
      tiny-llama) base=(--model "$root/models/tiny-llama/tiny-llama.onnx"
                        --input "$root/models/tiny-llama/tiny-llama.in0.npy") ;;
      kjv-tiny) base=(--model "$root/models/kjv-tiny/model.onnx"
                      --input "$root/models/kjv-tiny/heldout.in0.npy"
                      --calibration "$root/models/kjv-tiny/calibration.txt") ;;
      *) base=(--model "$models/$model.onnx" --input "$models/$model.in0.npy") ;;
    esac
    for dtype in fp32 bf16; do
      python3 "$here/../quant/check_kv_fp8.py" --infer-compile "$bin/infer-compile" \
        --infer-run "$bin/infer-run" "${base[@]}" --device cuda --dtype $dtype
      record $?
    done
  done
  # 40-token prompts through the FP8 cache's tensor-core prefill kernel (the default), then
  # through the general path (--no-fp8-cache-prefill-kernel).
  for model in tiny-llama tiny-gpt2; do
    case $model in
      tiny-llama) base=(--model "$root/models/tiny-llama/tiny-llama.onnx"
                        --input "$root/models/tiny-llama/tiny-llama.in0.npy") ;;
      *) base=(--model "$models/$model.onnx" --input "$models/$model.in0.npy") ;;
    esac
    for flag in "" --compile-arg=--no-fp8-cache-prefill-kernel; do
      python3 "$here/../quant/check_kv_fp8.py" --infer-compile "$bin/infer-compile" \
        --infer-run "$bin/infer-run" "${base[@]}" --device cuda --dtype bf16 --prompt-len 40 $flag
      record $?
    done
  done
}

quant_checks() {
  local quant=$here/../quant model base dtype root=$here/../..
  local tools=(--infer-compile "$bin/infer-compile" --infer-run "$bin/infer-run")
  # A model at a time each (their NVRTC compiles side by side), logs printed in order.
  for model in tiny-llama tiny-gpt2 tiny-qwen2; do
    base=$models/$model
    for dtype in fp32 bf16; do
      for scheme in "int4 --group-size 16" "int4 --group-size 32" "fp8 --rounding-flips --rtol 6e-2"; do
        python3 "$quant/check_quantized.py" "${tools[@]}" --device cuda --dtype $dtype --atol 1e-3 \
          --model "$base.onnx" --input "$base.in0.npy" --golden "$base.out0.npy" --scheme $scheme
        record $?
      done
      # bf16 fp8 with its steps of more than 8 tokens on the weight dequantized to bf16
      # (--no-fp8-gemm; by default they run cuBLASLt's FP8 GEMM).
      if [ $dtype = bf16 ]; then
        python3 "$quant/check_quantized.py" "${tools[@]}" --device cuda --dtype $dtype --atol 1e-3 \
          --model "$base.onnx" --input "$base.in0.npy" --golden "$base.out0.npy" --scheme fp8 \
          --rounding-flips --rtol 6e-2 --compile-arg=--no-fp8-gemm
        record $?
      fi
      # Every k of tiny-gpt2 is a multiple of 64: in bf16 its steps of up to 8
      # tokens run the tensor-core int4 GEMV (mma_block_k = 64), in f32
      # infer_quantized_gemm; in0's first row cut to 7 tokens and to 1.
      if [ $model = tiny-gpt2 ]; then
        for tokens in 7 1; do
          python3 -c "import numpy, sys; numpy.save(sys.argv[2], numpy.load(sys.argv[1])[:1, :$tokens])" \
            "$base.in0.npy" "$tmp/gpt2-$tokens-$dtype.npy"
          python3 "$quant/check_quantized.py" "${tools[@]}" --device cuda --dtype $dtype --atol 1e-3 \
            --model "$base.onnx" --input "$tmp/gpt2-$tokens-$dtype.npy" --scheme int4 --group-size 64
          record $?
          # bf16 fp8's decode steps on the FP8 tensor cores (the default), then on
          # infer_quantized_gemm (--no-fp8-mma-gemv).
          if [ $dtype = bf16 ]; then
            for flag in "" --compile-arg=--no-fp8-mma-gemv; do
              python3 "$quant/check_quantized.py" "${tools[@]}" --device cuda --dtype $dtype \
                --atol 1e-3 --model "$base.onnx" --input "$tmp/gpt2-$tokens-$dtype.npy" \
                --scheme fp8 --rounding-flips --rtol 6e-2 $flag
              record $?
            done
          fi
        done
      fi
    done > "$tmp/quant.$model.log" 2>&1 &
  done
  # Models that bring their weights quantized, against ONNX Runtime on the same model.
  for form in ort-nbits4 ort-nbits4-sym ort-nbits8 ort-qdq-uint4 qdq-uint8-channel qdq-int8-tensor \
      qdq-fp8-channel; do
    for dtype in fp32 bf16; do
      python3 "$quant/check_prequantized.py" "${tools[@]}" --device cuda --dtype $dtype --atol 1e-3 \
        --model "$root/models/tiny-llama/tiny-llama.onnx" --form $form --block-size 32 \
        --input "$root/models/tiny-llama/tiny-llama.in0.npy"
      record $?
    done
  done > "$tmp/quant.tiny-prequantized.log" 2>&1 &
  kv_fp8_checks > "$tmp/quant.tiny-kv-fp8.log" 2>&1 &
  wait
  cat "$tmp"/quant.tiny-*.log
  python3 "$quant/check_awq.py" "${tools[@]}" --device cuda --group-size 32 \
    --model "$root/models/tiny-llama/tiny-llama.onnx" --input "$root/models/tiny-llama/tiny-llama.in0.npy" \
    --calibration "$quant/calibration.txt"; record $?
  for scheme in "--compile-arg=--quantize --compile-arg=int4 --compile-arg=--group-size --compile-arg=32" \
      "--compile-arg=--quantize --compile-arg=fp8"; do
    python3 "$quant/check_quantized_generate.py" "${tools[@]}" --model "$root/models/kjv-tiny/model.onnx" \
      $scheme --prompt "In the beginning" --prompt "And the LORD spake unto Moses, saying" \
      --prompt "Blessed are the"; record $?
  done
}

jobs=()
# Stopped (a time limit's SIGTERM): stop the checks and print what they logged so far.
stopped() {
  kill $(jobs -p) 2>/dev/null; wait
  echo "run-all: stopped before the end; the checks' logs so far:"
  for name in "${jobs[@]}"; do cat "$tmp/job.$name.log"; done
  echo "gpu tests: $(grep -cx 0 "$results") passed, stopped"
  exit 143
}
trap stopped TERM INT
start() { local name=$1; shift; "$@" > "$tmp/job.$name.log" 2>&1 & jobs+=("$name"); }
if [ ${#only[@]} -gt 0 ]; then
  for model in "${only[@]}"; do
    [ "$model" = quant ] && { start quant quant_checks; continue; }
    [ "$model" = kv-fp8 ] && { start kv-fp8 kv_fp8_checks; continue; }
    [ "$model" = tune ] && { start tune tune_check; continue; }
    if [ "$model" = fusions ]; then # the runtime switches and the compile's fusion flags
      for flag in --fuse=rotary-kv-write --no-fuse=kv-decode --no-fuse=qkv-decode --no-fuse=argmax \
          --no-fuse=identity-gather --no-fuse=gemm-prologue,gated-epilogue --mma-gemv-min-tokens=0; do
        start "fusion.${flag#--}" fusion_checks $flag
      done
      for setting in INFER_PDL=1 INFER_SMEM_CARVEOUT=-1 INFER_UPLOAD_STREAM=0 \
          INFER_PREFILL_GRAPHS=0; do
        start "switch.${setting%=*}" switch_checks $setting
      done
      continue
    fi
    [ -f "$models/$model.onnx" ] || { echo "FAIL: no model $models/$model.onnx"; record 1; continue; }
    start "forward.$model" model_checks $model no-sanitizers
    [ -f "$models/$model.greedy.json" ] && start "generate.$model" generate_checks $model
  done
  wait
  for name in "${jobs[@]}"; do cat "$tmp/job.$name.log"; done
  pass=$(grep -cx 0 "$results"); total=$(wc -l < "$results")
  echo "gpu tests: $pass passed, $((total - pass)) failed (models: ${only[*]})"
  [ "$total" -gt 0 ] && [ "$pass" -eq "$total" ]
  exit
fi
for model in tiny-llama tiny-qwen2 tiny-gpt2 tiny-opt tiny-opt-ts; do
  [ -f "$models/$model.onnx" ] && start "forward.$model" model_checks $model
  [ -f "$models/$model.greedy.json" ] && start "generate.$model" generate_checks $model
done
# The further families' models (test/models/families.txt, CMake's INFER_FAMILY_MODELS): goldens and
# greedy generate; the sanitizers on tiny-mixtral only (the mixture-of-experts kernels, Moe.cuh).
for model in $(cat "$models/families.txt" 2>/dev/null); do
  sanitizers=no-sanitizers; [ $model = tiny-mixtral ] && sanitizers=
  [ -f "$models/$model.onnx" ] && start "forward.$model" model_checks $model $sanitizers
  [ -f "$models/$model.greedy.json" ] && start "generate.$model" generate_checks $model
done
if [ -f "$models/tiny-llama.greedy.json" ]; then
  for setting in INFER_PDL=1 INFER_SMEM_CARVEOUT=-1 INFER_UPLOAD_STREAM=0 \
      INFER_PREFILL_GRAPHS=0; do
    start "switch.${setting%=*}" switch_checks $setting
  done
  for flag in --fuse=rotary-kv-write --no-fuse=kv-decode --no-fuse=qkv-decode --no-fuse=argmax \
      --no-fuse=identity-gather --no-fuse=gemm-prologue,gated-epilogue --mma-gemv-min-tokens=0; do
    start "fusion.${flag#--}" fusion_checks $flag
  done
fi
[ -f "$models/tiny-llama.onnx" ] && start "tune" tune_check
[ -f "$here/../quant/check_quantized.py" ] && start "quant" quant_checks
wait
for name in "${jobs[@]}"; do cat "$tmp/job.$name.log"; done
if [ -n "$kernels" ]; then
  for test in "$kernels"/row_kernels_test "$kernels"/attention_test "$kernels"/kv_attention_test \
      "$kernels"/kv_fp8_test "$kernels"/quantized_fp8_gemv_test \
      "$kernels"/sampling_test "$kernels"/gemv_test "$kernels"/qkv_decode_test \
      "$kernels"/quantized_gemm_test; do
    [ -x "$test" ] || continue
    "$test"; rc=$?; record $rc
    echo "kernel test $(basename "$test"): exit $rc"
  done
fi
pass=$(grep -cx 0 "$results"); skip=$(grep -cx 77 "$results"); total=$(wc -l < "$results")
fail=$((total - pass - skip))
echo "gpu tests: $pass passed, $fail failed, $skip skipped"
[ "$total" -gt 0 ] && [ $fail -eq 0 ]
