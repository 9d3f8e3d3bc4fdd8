#!/usr/bin/env bash
# Issue 48's FP8 GEMM on one GPU: `run-all.sh ... quant` (every quantized compile against its
# reference on cuda, fp8's prefill steps now on cuBLASLt's FP8 GEMM), then llama3-8b's shapes
# with 8 of its 32 layers (random bf16 weights, exported here) offline, 1,024 requests of
# 128 / 128: fp8 with its large steps on the FP8 GEMM (the default), fp8 without (the weight
# dequantized to bf16 each step), and bf16 beside them as time allows.
# carry: .bundle. Logs, bench.jsonl and summary.txt under $OUT as all.tgz.
set -uo pipefail
LIMIT=${LIMIT:-585}; . bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
left() { [ $(( LIMIT - SECONDS )) -gt $1 ]; }
python3 -c "import json; c=json.load(open('bench/presets/llama3-8b.json')); c['num_hidden_layers']=8; json.dump(c, open('/tmp/l8-short.json','w'))"
if [ ! -f /tmp/l8-short/model.onnx ]; then
  (PYTHONPATH=python python3 -m infer.export /tmp/l8-short.json -o /tmp/l8-short --random-weights \
    --dtype bf16 > /tmp/l8-short-export.log 2>&1; echo "exit $?" >> /tmp/l8-short-export.log) &
fi
timeout 200 bash test/gpu/run-all.sh $B/bin test/models "" quant > $OUT/gpu-quant.log 2>&1
log "run-all.sh quant exit $? ($SECONDS s): $(grep -E 'gpu tests:' $OUT/gpu-quant.log)"
grep -E '^FAIL' $OUT/gpu-quant.log | head -20 | tee -a $sum
wait
log "export: $(tail -1 /tmp/l8-short-export.log) ($SECONDS s)"
OFFLINE=(--requests 1024 --input-len 128 --output-len 128 --max-sequences 1024 --warmup-requests 256)
for variant in "fp8 --quantize fp8" "fp8deq --quantize fp8 --no-fp8-gemm" "bf16"; do
  set -- $variant; name=l8s-$1; shift
  left 90 || break
  timeout $(( LIMIT - SECONDS )) $B/bin/infer-compile /tmp/l8-short/model.onnx --dtype bf16 "$@" \
    -o /tmp/$name.infer > $OUT/$name-compile.log 2>&1 || { log "$name compile failed"; continue; }
  bench $name-offline-1024 /tmp/$name.infer "${OFFLINE[@]}"
  rm -f /tmp/$name.infer
done
# What is left: the FP8 KV cache's compile, whose scales the reference interpreter measures
# (its progress lines say how long each prompt takes).
left 30 && timeout $(( LIMIT - SECONDS )) $B/bin/infer-compile /tmp/l8-short/model.onnx --dtype bf16 \
  --kv-cache-dtype fp8 -o /tmp/l8s-kvfp8.infer > $OUT/l8s-kvfp8-compile.log 2>&1
log "kvfp8 compile exit $? ($SECONDS s): $(grep -E 'prompt|scales' $OUT/l8s-kvfp8-compile.log | tr '\n' ' ')"
pack
