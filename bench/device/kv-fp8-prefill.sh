#!/usr/bin/env bash
# Issue 48's FP8 KV cache on one GPU, prefill on tensor cores: the kernel tests of
# .bundle/kernels.tar.xz that are about it (kv_fp8_test: infer_kv_prefill_attention_fp8 and the
# general path against a double reference; quantized_fp8_gemv_test when the bundle has it),
# `run-all.sh ... kv-fp8` (every FP8 KV check against ONNX Runtime, the 40-token prompts through
# --no-fp8-cache-prefill-kernel among them), then llama3-8b's shapes with 8 of its 32 layers
# (random bf16 weights, exported here): --kv-cache-dtype fp8 with and without
# --no-fp8-cache-prefill-kernel and the bf16 cache, 64 requests of 2,048 in / 128 out and batch 1;
# each compile's wall time and peak RSS (the FP8 KV calibration on the interpreter).
# carry: .bundle. Logs, bench.jsonl and summary.txt under $OUT as all.tgz.
set -uo pipefail
LIMIT=${LIMIT:-585}; . bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
log "commit $(git log -1 --format=%h 2>/dev/null)"
python3 -c "import json; c=json.load(open('bench/presets/llama3-8b.json')); c['num_hidden_layers']=8; json.dump(c, open('/tmp/l8-short.json','w'))"
if [ ! -f /tmp/l8-short/model.onnx ]; then
  (PYTHONPATH=python nice -n 19 python3 -m infer.export /tmp/l8-short.json -o /tmp/l8-short \
    --random-weights --dtype bf16 > /tmp/l8-short-export.log 2>&1; echo "exit $?" >> /tmp/l8-short-export.log) &
  short_export=$!
fi
if [ "${EXPORT_8B:-0}" = 1 ] && [ ! -f /tmp/l8/model.onnx ]; then # for l8-quant.sh's next call
  (PYTHONPATH=python nice -n 19 setsid python3 -m infer.export bench/presets/llama3-8b.json -o /tmp/l8 \
    --random-weights --dtype bf16 --tokenizer test/tokenizer/fixtures/llama3 > /tmp/l8-export.log 2>&1;
   echo "exit $?" >> /tmp/l8-export.log) > /dev/null 2>&1 &
fi
if [ -f .bundle/kernels.tar.xz ]; then
  mkdir -p /tmp/k && tar xJf .bundle/kernels.tar.xz -C /tmp/k
  for t in /tmp/k/kv_fp8_test /tmp/k/quantized_fp8_gemv_test; do
    [ -x $t ] || continue
    n=$(basename $t)
    timeout 120 $t > $OUT/$n.log 2>&1
    log "$n exit $?: $(grep -c ' ok$\|^PASS' $OUT/$n.log) passed, $(grep -c 'FAIL' $OUT/$n.log) failed"
    grep -E 'FAIL|^timing' $OUT/$n.log | head -20 | sed "s/^/$n /" | tee -a $sum
  done
fi
timeout 200 bash test/gpu/run-all.sh $B/bin test/models "" kv-fp8 > $OUT/gpu-kv-fp8.log 2>&1
log "run-all.sh kv-fp8 exit $? ($SECONDS s): $(grep -E 'gpu tests:' $OUT/gpu-kv-fp8.log)"
grep -E '^FAIL' $OUT/gpu-kv-fp8.log | head -20 | tee -a $sum
[ -n "${short_export:-}" ] && wait $short_export
log "export: $(tail -1 /tmp/l8-short-export.log) ($SECONDS s)"
LONG=(--requests 64 --input-len 2048 --output-len 128 --max-sequences 64 --warmup-requests 8)
BS1=(--requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2)
for variant in "kvfp8pre --kv-cache-dtype fp8" "kvfp8 --kv-cache-dtype fp8 --no-fp8-cache-prefill-kernel" "bf16"; do
  set -- $variant; name=l8s-$1; shift
  left 60 || break
  timeout $(( LIMIT - SECONDS )) /usr/bin/time -f "%e s wall, %M KiB peak" $B/bin/infer-compile \
    /tmp/l8-short/model.onnx --dtype bf16 "$@" -o /tmp/$name.infer > $OUT/$name-compile.log 2>&1 \
    || { log "$name compile failed: $(tail -2 $OUT/$name-compile.log | tr '\n' ' ')"; continue; }
  log "$name compile: $(tail -1 $OUT/$name-compile.log)"
  bench $name-long-64x2048 /tmp/$name.infer "${LONG[@]}"
  left 30 && bench $name-bs1 /tmp/$name.infer "${BS1[@]}"
  rm -f /tmp/$name.infer
done
pack
