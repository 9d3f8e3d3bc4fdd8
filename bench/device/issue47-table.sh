#!/usr/bin/env bash
# Issue 47's table on one GPU, each model in one run: llama3-8b bf16 (from /tmp/l8, which
# suite-and-l8-export.sh leaves on a warm machine) compiled and benched offline (1,024 requests
# of 128 / 128), with 64 requests of 2,048 in / 128 out (TPOT p50), at batch 1 and for the TTFT
# of 2,048 tokens, and its cold start (process start -> first token); then tinyllama-1.1b and
# qwen2.5-0.5b (random weights, exported here) at batch 1 and tinyllama's TTFT of 2,048.
# Logs, bench.jsonl (one JSON line per bench, with its name) and summary.txt under $OUT.
set -uo pipefail
LIMIT=590; . bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
log "commit $(git log -1 --format=%h 2>/dev/null)"
compile() { # NAME ONNX ARTIFACT
  /usr/bin/time -v -o $OUT/$1-compile-time.txt $B/bin/infer-compile $2 --dtype bf16 -o $3 > $OUT/$1-compile.log 2>&1
  log "$1 compile exit $?: $(grep -E 'Elapsed' $OUT/$1-compile-time.txt | sed 's/.*: //') wall, $(grep -E 'Maximum res' $OUT/$1-compile-time.txt | sed 's/.*: //') KiB peak ($SECONDS s)"
}
if [ -f /tmp/l8/model.onnx ]; then
  compile l8 /tmp/l8/model.onnx /tmp/l8.infer
  for i in 1 2; do
    start=$(date +%s.%N)
    $B/bin/infer-run /tmp/l8.infer generate --prompt-ids 1,2,3,4,5,6,7,8 --max-new-tokens 1 --max-sequences 1 > $OUT/l8-cold.log 2>&1
    log "l8 cold start $i: $(awk -v a=$start -v b=$(date +%s.%N) 'BEGIN{printf "%.2f", b-a}') s"
  done
  bench l8-offline-1024 /tmp/l8.infer --requests 1024 --input-len 128 --output-len 128 --max-sequences 1024 --warmup-requests 256
  bench l8-long-64x2048 /tmp/l8.infer --requests 64 --input-len 2048 --output-len 128 --max-sequences 64 --warmup-requests 8
  bench l8-bs1 /tmp/l8.infer --requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2
  bench l8-ttft2048 /tmp/l8.infer --requests 3 --input-len 2048 --output-len 1 --batch 1 --warmup-requests 1
else
  log "no /tmp/l8/model.onnx: llama3-8b skipped (a fresh machine?)"
fi
for preset in tinyllama-1.1b qwen2.5-0.5b; do
  [ $SECONDS -lt 470 ] || { log "$preset skipped at $SECONDS s"; continue; }
  PYTHONPATH=python timeout $(( 560 - SECONDS )) python3 -m infer.export bench/presets/$preset.json -o /tmp/$preset --random-weights --dtype bf16 > $OUT/$preset-export.log 2>&1 \
    || { log "$preset export failed"; tail -3 $OUT/$preset-export.log | tee -a $sum; continue; }
  compile $preset /tmp/$preset/model.onnx /tmp/$preset.infer
  bench $preset-bs1 /tmp/$preset.infer --requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2
  [ $preset = tinyllama-1.1b ] && bench $preset-ttft2048 /tmp/$preset.infer --requests 3 --input-len 2048 --output-len 1 --batch 1 --warmup-requests 1
done
log "== end ($SECONDS s)"
pack
