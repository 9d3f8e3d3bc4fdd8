#!/usr/bin/env bash
# Batch-1 decode with the shared-memory carveout every kernel asks for (INFER_SMEM_CARVEOUT
# 100, the default since 59bbf01 applied it) against the driver's per-kernel choice (-1), on
# one machine, the two alternating: llama3-8b's shapes with 8 of its 32 layers (L8_LAYERS;
# the GEMVs of a layer and the LM head are the full model's), tinyllama-1.1b and
# qwen2.5-0.5b (random bf16 weights, exported here), then each one's decode step launch by
# launch (INFER_PROFILE_STEPS). Session 64 measured llama3-8b at 242 tok/s on the H200 where
# session 42 (no carveout applied: a bug) had 252.5, its GEMVs 5% slower a step.
# carry: .bundle. Logs, bench.jsonl and summary.txt under $OUT as all.tgz.
set -uo pipefail
. bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
log "commit $(git log -1 --format=%h 2>/dev/null)"
python3 -c "import json,sys; c=json.load(open('bench/presets/llama3-8b.json')); c['num_hidden_layers']=int(sys.argv[1]); json.dump(c, open('/tmp/l8-short.json','w'))" ${L8_LAYERS:-8}
for preset in /tmp/l8-short.json bench/presets/tinyllama-1.1b.json bench/presets/qwen2.5-0.5b.json; do
  m=$(basename $preset .json)
  [ $SECONDS -lt 400 ] || { log "$m skipped at $SECONDS s"; continue; }
  PYTHONPATH=python timeout 200 python3 -m infer.export $preset -o /tmp/$m --random-weights --dtype bf16 > $OUT/$m-export.log 2>&1 \
    || { log "$m export failed"; tail -3 $OUT/$m-export.log | tee -a $sum; continue; }
  $B/bin/infer-compile /tmp/$m/model.onnx --dtype bf16 -o /tmp/$m.infer > $OUT/$m-compile.log 2>&1 || { log "$m compile failed"; continue; }
  for c in 100 -1 100 -1; do
    INFER_SMEM_CARVEOUT=$c bench $m-carveout$c /tmp/$m.infer --requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2
  done
  for c in 100 -1; do
    INFER_SMEM_CARVEOUT=$c INFER_PROFILE_STEPS=40 timeout 60 $B/bin/infer-run /tmp/$m.infer bench --device cuda --requests 2 \
      --input-len 128 --output-len 64 --batch 1 2>&1 | grep 'step 40' | sed "s/^/$m carveout $c: /" | tee -a $sum
  done
done
log "== end ($SECONDS s)"
pack
