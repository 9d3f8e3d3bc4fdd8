#!/usr/bin/env bash
# One call for issues 48 and 46 (carry .bundle/infer-bundle.tar.xz): the FP8 KV cache's GPU checks
# (test/quant/check_kv_fp8.py on cuda, fp32 and bf16, five models side by side), the family models
# whose coverage log was lost (run-all.sh with their names), while qwen3-30b-a3b-8l's random-weight
# export runs beside them; then that export compiled (bf16) and benched at batch 1 and offline.
# Everything under $OUT/logs goes back as one $OUT/results.tgz. KV_MODELS picks the FP8 KV
# checks' models; Q3=0 skips the qwen3 export and benches (a short call).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b
B=/tmp/b/infer-bundle L=$OUT/logs
mkdir -p $L
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee $L/gpu.txt
( [ "${Q3:-1}" = 0 ] || [ -f /tmp/q3/model.onnx ] || PYTHONPATH=python nice -n 5 python3 -m infer.export \
    bench/presets/qwen3-30b-a3b-8l.json -o /tmp/q3 --random-weights --dtype bf16 > $L/export-q3.log 2>&1
  echo "export exit $? at $SECONDS s" >> $L/export-q3.log ) &
export_pid=$!
tools=(--infer-compile $B/bin/infer-compile --infer-run $B/bin/infer-run)
for model in ${KV_MODELS:-tiny-llama tiny-gpt2 tiny-gemma2 tiny-falcon-7b kjv-tiny}; do
  case $model in
    tiny-llama) base=(--model models/tiny-llama/tiny-llama.onnx --input models/tiny-llama/tiny-llama.in0.npy) ;;
    kjv-tiny) base=(--model models/kjv-tiny/model.onnx --input models/kjv-tiny/heldout.in0.npy
                    --calibration models/kjv-tiny/calibration.txt) ;;
    *) base=(--model test/models/$model.onnx --input test/models/$model.in0.npy) ;;
  esac
  for dtype in fp32 bf16; do
    timeout 150 python3 test/quant/check_kv_fp8.py "${tools[@]}" "${base[@]}" --device cuda --dtype $dtype
    echo "exit $?"
  done > $L/kv8.$model.log 2>&1 &
done
timeout 120 bash test/gpu/run-all.sh $B/bin test/models "" tiny-mixtral tiny-qwen2_moe \
  tiny-deepseek_v3-vdim > $L/gpu_models.log 2>&1
echo "family checks exit $? ($SECONDS s)"; tail -1 $L/gpu_models.log
wait $(jobs -p | grep -v "^$export_pid$") 2>/dev/null
echo "== kv fp8 checks ($SECONDS s)"; cat $L/kv8.*.log | grep -E "PASS|FAIL|exit|Error|error" | cut -c1-250
[ "${Q3:-1}" = 0 ] || timeout $(( 160 - SECONDS > 1 ? 160 - SECONDS : 1 )) tail --pid=$export_pid -f /dev/null
tail -2 $L/export-q3.log 2>/dev/null
if [ "${Q3:-1}" != 0 ] && [ -f /tmp/q3/model.onnx ]; then
  timeout $(( 220 - SECONDS )) $B/bin/infer-compile /tmp/q3/model.onnx -o /tmp/q3.infer --dtype bf16 \
    > $L/q3-compile.log 2>&1; echo "q3 compile exit $? ($SECONDS s)"; tail -3 $L/q3-compile.log
  bench() { # TAG ARGS...
    local tag=$1; shift
    [ $(( 318 - SECONDS )) -lt 20 ] && { echo "q3 $tag: skipped (time)"; return; }
    timeout $(( 318 - SECONDS )) $B/bin/infer-run /tmp/q3.infer bench --device cuda "$@" > $L/q3-$tag.log 2>&1
    echo "q3 $tag exit $? ($SECONDS s): $*"; grep -v '^{' $L/q3-$tag.log | tail -7
    tail -1 $L/q3-$tag.log | grep '^{' >> $L/bench.jsonl
  }
  [ -f /tmp/q3.infer ] && bench bs1 --requests 4 --input-len 128 --output-len 128 --batch 1 --warmup-requests 1
  [ -f /tmp/q3.infer ] && bench offline --requests 256 --input-len 128 --output-len 128 --max-sequences 256 --warmup-requests 64
fi
tar czf $OUT/results.tgz -C $L . && rm -rf $L
echo "== end ($SECONDS s)"
