#!/usr/bin/env bash
# infer-compile --tune against cuBLASLt's heuristic, end to end, on one fresh machine: with
# .bundle/kernels.tar.xz (kv_attention_test) the paged attention kernels' checks and timings;
# the GPU check of --tune (gpu.tune; SUITE_EXTRA: more run-all.sh names, SUITE=0: none);
# tinyllama-1.1b and qwen2.5-0.5b (PRESETS: others; random weights, exported here) compiled
# without records and with --tune, benched for the TTFT of 2,048 tokens (10 requests, the two
# artifacts alternating twice), offline (512 requests of 128 / 128) and at batch 1, greedy ids
# of the tuned artifact in two processes; meanwhile llama3-8b bf16 exported at the lowest CPU
# priority, then l8-tuned.sh on this call's clock (L8=0: no llama3-8b; L8=export: only its
# export into /tmp/l8, for l8-tuned.sh in a next call on the warm machine, with the tuning
# database in /tmp/tuning-db.json). carry: .bundle. Everything under $OUT as all.tgz.
set -uo pipefail
. bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader)"
log "commit $(git log -1 --format=%h 2>/dev/null)"
L8=${L8:-1} # L8=0: the small models alone (about 300 s)
[ $L8 != 0 ] && ( [ -f /tmp/l8/model.onnx ] || PYTHONPATH=python nice -n 19 python3 -m infer.export bench/presets/llama3-8b.json \
    -o /tmp/l8 --random-weights --dtype bf16 --tokenizer test/tokenizer/fixtures/llama3 ) > $OUT/l8-export.log 2>&1 &
export_pid=$!
if [ -f .bundle/kernels.tar.xz ] && [ "${KERNELS:-1}" = 1 ]; then
  tar xJf .bundle/kernels.tar.xz -C /tmp/b
  timeout 120 /tmp/b/kv_attention_test > $OUT/kv_attention_test.log 2>&1
  log "kv_attention_test exit $? ($SECONDS s): $(tail -1 $OUT/kv_attention_test.log)"
fi
if [ "${SUITE:-1}" = 1 ]; then # SUITE=0: without gpu.tune
  timeout ${SUITE_SECONDS:-150} bash test/gpu/run-all.sh $B/bin test/models "" tune ${SUITE_EXTRA:-} > $OUT/gpu_suite.log 2>&1
  log "suite (tune) exit $? ($SECONDS s): $(grep -E 'gpu tests:' $OUT/gpu_suite.log)"
  grep -E "^FAIL|^OK" $OUT/gpu_suite.log | head -5 | tee -a $sum
fi
compare() { # NAME ONNX OFFLINE_REQUESTS
  local m=$1 onnx=$2 offline=$3 start
  $B/bin/infer-compile $onnx --dtype bf16 -o /tmp/$m.heuristic.infer > $OUT/$m-compile.log 2>&1
  start=$SECONDS
  $B/bin/infer-compile $onnx --dtype bf16 -o /tmp/$m.tuned.infer --tune --tuning-db $OUT/tuning-db.json > $OUT/$m-tune.log 2>&1
  log "$m --tune compile exit $? in $(( SECONDS - start )) s: $(grep -E 'tuned in' $OUT/$m-tune.log)"
  sed -n '/per step/,$p' $OUT/$m-tune.log | sed -n 2,16p | tee -a $sum
  for a in heuristic tuned heuristic tuned; do
    bench $m-$a-ttft2048 /tmp/$m.$a.infer --requests 10 --input-len 2048 --output-len 1 --batch 1 --warmup-requests 2
  done
  for a in heuristic tuned; do
    bench $m-$a-offline$offline /tmp/$m.$a.infer --requests $offline --input-len 128 --output-len 128 --max-sequences $offline --warmup-requests 64
    bench $m-$a-bs1 /tmp/$m.$a.infer --requests 6 --input-len 128 --output-len 128 --batch 1 --warmup-requests 1
  done
  for i in 1 2; do
    $B/bin/infer-run /tmp/$m.tuned.infer generate --device cuda --greedy --prompt-ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20 \
      --prompt-ids 5,6,7 --max-new-tokens 16 2>/dev/null | grep '^request' > $OUT/$m-ids$i.txt
  done
  cmp -s $OUT/$m-ids1.txt $OUT/$m-ids2.txt && log "$m tuned: two processes, the same ids ($(wc -l < $OUT/$m-ids1.txt) requests)" \
    || log "$m tuned: two processes gave different ids"
}
for preset in ${PRESETS:-tinyllama-1.1b qwen2.5-0.5b}; do
  PYTHONPATH=python timeout 150 python3 -m infer.export bench/presets/$preset.json -o /tmp/$preset --random-weights --dtype bf16 > $OUT/$preset-export.log 2>&1 \
    || { log "$preset export failed"; tail -3 $OUT/$preset-export.log | tee -a $sum; continue; }
  compare $preset /tmp/$preset/model.onnx 512
done
if [ $L8 = 1 ]; then # l8-tuned.sh on this call's clock, its logs under $OUT/l8
  left=$(( 450 - SECONDS )); [ $left -lt 1 ] && left=1
  timeout $left tail --pid=$export_pid -f /dev/null
  if kill -0 $export_pid 2>/dev/null; then log "l8 export still running at $SECONDS s"; else log "l8 export done ($SECONDS s)"; fi
  cp $OUT/tuning-db.json /tmp/tuning-db.json 2>/dev/null
  mkdir -p $OUT/l8
  [ -f /tmp/l8/model.onnx ] && ! kill -0 $export_pid 2>/dev/null && \
    OUT=$OUT/l8 START_SECONDS=$SECONDS TUNING_DB=/tmp/tuning-db.json bash bench/device/l8-tuned.sh > /dev/null 2>&1
  (cd $OUT/l8 && tar xzf all.tgz && rm all.tgz) 2>/dev/null; cat $OUT/l8/summary.txt >> $sum 2>/dev/null
fi
if [ $L8 = export ]; then
  left=$(( 585 - SECONDS )); [ $left -lt 1 ] && left=1
  timeout $left tail --pid=$export_pid -f /dev/null
  [ -f /tmp/l8/model.onnx ] && log "l8 export done ($SECONDS s)" || log "l8 export not done at $SECONDS s"
fi
cp $OUT/tuning-db.json /tmp/tuning-db.json 2>/dev/null
log "== end ($SECONDS s)"
pack
