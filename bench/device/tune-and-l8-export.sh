#!/usr/bin/env bash
# infer-compile --tune on the GPU (docs/tuning.md): the GPU checks of --tune and of the fusion
# flags, then tinyllama-1.1b and qwen2.5-0.5b (random weights, exported here) compiled without
# records and with --tune, each benched at batch 1 (128 / 128) and offline (512 requests of
# 128 / 128), tinyllama's TTFT of 2,048 too, the two artifacts in turn in one run; the tuned
# artifact's greedy ids in two processes. Meanwhile llama3-8b's random-weight export runs at
# the lowest CPU priority into /tmp/l8 for l8-tuned.sh on the same warm machine next.
# carry: .bundle (infer-bundle.tar.xz). Logs, bench.jsonl, summary.txt and the tuning
# database under $OUT.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
B=/tmp/b/infer-bundle
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b
sum=$OUT/summary.txt; : > $sum; : > $OUT/bench.jsonl
log() { echo "$*" | tee -a $sum; }
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader)"
log "commit $(git log -1 --format=%h 2>/dev/null)"
( [ -f /tmp/l8/model.onnx ] || PYTHONPATH=python nice -n 19 python3 -m infer.export bench/presets/llama3-8b.json \
    -o /tmp/l8 --random-weights --dtype bf16 --tokenizer test/tokenizer/fixtures/llama3 ) > $OUT/l8-export.log 2>&1 &
export_pid=$!
timeout 200 bash test/gpu/run-all.sh $B/bin test/models "" tune fusions > $OUT/gpu_suite.log 2>&1
log "suite (tune, fusions) exit $? ($SECONDS s): $(grep -E 'gpu tests:' $OUT/gpu_suite.log)"
grep -E "^FAIL" $OUT/gpu_suite.log | head -10 | tee -a $sum
bench() { # NAME ARTIFACT ARGS...: one infer-run bench, its JSON line tagged with NAME
  local name=$1 artifact=$2; shift 2
  timeout $(( 585 - SECONDS )) $B/bin/infer-run $artifact bench --device cuda "$@" > $OUT/$name.log 2>&1 \
    || { log "$name failed ($SECONDS s)"; tail -3 $OUT/$name.log | tee -a $sum; return; }
  log "$name: $(grep -v '^{' $OUT/$name.log | tail -2 | tr '\n' ' ')"
  tail -1 $OUT/$name.log | python3 -c "import json,sys; d=json.load(sys.stdin); d['name']='$name'; print(json.dumps(d))" >> $OUT/bench.jsonl
}
for preset in tinyllama-1.1b qwen2.5-0.5b; do
  [ $SECONDS -lt 430 ] || { log "$preset skipped at $SECONDS s"; continue; }
  PYTHONPATH=python timeout 150 python3 -m infer.export bench/presets/$preset.json -o /tmp/$preset --random-weights --dtype bf16 > $OUT/$preset-export.log 2>&1 \
    || { log "$preset export failed"; tail -3 $OUT/$preset-export.log | tee -a $sum; continue; }
  $B/bin/infer-compile /tmp/$preset/model.onnx --dtype bf16 -o /tmp/$preset.heuristic.infer > $OUT/$preset-compile.log 2>&1
  start=$SECONDS
  $B/bin/infer-compile /tmp/$preset/model.onnx --dtype bf16 -o /tmp/$preset.tuned.infer --tune --tuning-db $OUT/tuning-db.json > $OUT/$preset-tune.log 2>&1
  log "$preset --tune compile exit $? in $(( SECONDS - start )) s: $(grep -E 'tuned in' $OUT/$preset-tune.log)"
  sed -n '/per step/,$p' $OUT/$preset-tune.log | head -18 | tee -a $sum
  for a in heuristic tuned; do
    bench $preset-$a-bs1 /tmp/$preset.$a.infer --requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2
    bench $preset-$a-offline512 /tmp/$preset.$a.infer --requests 512 --input-len 128 --output-len 128 --max-sequences 512 --warmup-requests 64
    [ $preset = tinyllama-1.1b ] && bench $preset-$a-ttft2048 /tmp/$preset.$a.infer --requests 3 --input-len 2048 --output-len 1 --batch 1 --warmup-requests 1
  done
  for i in 1 2; do
    $B/bin/infer-run /tmp/$preset.tuned.infer generate --device cuda --greedy --prompt-ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20 \
      --prompt-ids 5,6,7 --max-new-tokens 16 2>/dev/null | grep '^request' > $OUT/$preset-ids$i.txt
  done
  cmp -s $OUT/$preset-ids1.txt $OUT/$preset-ids2.txt && log "$preset tuned: two processes, the same ids ($(wc -l < $OUT/$preset-ids1.txt) requests)" \
    || log "$preset tuned: two processes gave different ids"
done
left=$(( 590 - SECONDS )); [ $left -lt 1 ] && left=1
timeout $left tail --pid=$export_pid -f /dev/null
if kill -0 $export_pid 2>/dev/null; then log "l8 export still running at $SECONDS s"; else wait $export_pid; log "l8 export exit $? ($SECONDS s)"; fi
tail -2 $OUT/l8-export.log
log "== end ($SECONDS s)"
