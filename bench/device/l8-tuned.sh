#!/usr/bin/env bash
# llama3-8b bf16 (random weights, from /tmp/l8, which tune-check.sh exports (L8=1, L8=export) on the warm
# machine) compiled without records and with --tune (the tuning database of the run before
# extended, under $OUT), each benched offline (1,024 requests of 128 / 128), at batch 1, with
# 64 requests of 2,048 in / 128 out and for the TTFT of 2,048 tokens, the two artifacts in turn;
# the tuned artifact's greedy ids in two processes and its cold start (process -> first token,
# twice), then its steps launch by launch (INFER_PROFILE_STEPS: an offline prefill of 8,192
# tokens and decode of 1,024, a decode of 64 long sequences, a batch-1 decode and prefill, a
# 2,048-token prefill) for the per-kernel tables.
# carry: .bundle. Logs, bench.jsonl and summary.txt under $OUT.
# START_SECONDS: the seconds already spent in this call (when tune-check.sh runs it).
set -uo pipefail
SECONDS=${START_SECONDS:-0}
. bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
[ -f /tmp/l8/model.onnx ] || { log "no /tmp/l8/model.onnx (a fresh machine?)"; exit 1; }
[ -f ${TUNING_DB:-/nonexistent} ] && cp $TUNING_DB $OUT/tuning-db.json
start=$SECONDS
$B/bin/infer-compile /tmp/l8/model.onnx --dtype bf16 -o /tmp/l8.tuned.infer --tune --tuning-db $OUT/tuning-db.json > $OUT/l8-tune.log 2>&1
log "l8 --tune compile exit $? in $(( SECONDS - start )) s: $(grep -E 'tuned in' $OUT/l8-tune.log)"
sed -n '/per step/,$p' $OUT/l8-tune.log | head -18 | tee -a $sum
start=$SECONDS
$B/bin/infer-compile /tmp/l8/model.onnx --dtype bf16 -o /tmp/l8.heuristic.infer > $OUT/l8-compile.log 2>&1
log "l8 compile (no records) exit $? in $(( SECONDS - start )) s"
for a in tuned heuristic; do
  bench l8-$a-offline1024 /tmp/l8.$a.infer --requests 1024 --input-len 128 --output-len 128 --max-sequences 1024 --warmup-requests 256
  bench l8-$a-bs1 /tmp/l8.$a.infer --requests 6 --input-len 128 --output-len 128 --batch 1 --warmup-requests 1
done
for a in tuned heuristic; do
  bench l8-$a-long64x2048 /tmp/l8.$a.infer --requests 64 --input-len 2048 --output-len 128 --max-sequences 64 --warmup-requests 8
  bench l8-$a-ttft2048 /tmp/l8.$a.infer --requests 3 --input-len 2048 --output-len 1 --batch 1 --warmup-requests 1
done
for i in 1 2; do
  s=$(date +%s.%N)
  timeout $(( 590 - SECONDS )) $B/bin/infer-run /tmp/l8.tuned.infer generate --device cuda --greedy --prompt-ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20 \
    --prompt-ids 5,6,7 --max-new-tokens 16 2>/dev/null | grep '^request' > $OUT/l8-ids$i.txt
  log "l8 tuned generate $i: $(awk -v a=$s -v b=$(date +%s.%N) 'BEGIN{printf "%.2f", b-a}') s process"
done
cmp -s $OUT/l8-ids1.txt $OUT/l8-ids2.txt && log "l8 tuned: two processes, the same ids ($(wc -l < $OUT/l8-ids1.txt) requests)" \
  || log "l8 tuned: two processes gave different ids"
for i in 1 2; do
  s=$(date +%s.%N)
  timeout $(( 590 - SECONDS )) $B/bin/infer-run /tmp/l8.tuned.infer generate --device cuda --prompt-ids 1,2,3,4,5,6,7,8 --max-new-tokens 1 --max-sequences 1 > $OUT/l8-cold$i.log 2>&1
  log "l8 cold start $i (process start -> first token -> exit): $(awk -v a=$s -v b=$(date +%s.%N) 'BEGIN{printf "%.2f", b-a}') s"
done
profile() { # NAME STEPS ARGS...: the steps launch by launch, time by launch kind
  local name=$1 steps=$2; shift 2
  [ $SECONDS -lt 560 ] || { log "profile $name skipped at $SECONDS s"; return; }
  INFER_PROFILE_STEPS=$steps timeout $(( 590 - SECONDS )) $B/bin/infer-run /tmp/l8.tuned.infer bench --device cuda "$@" > $OUT/l8-profile-$name.log 2>&1
  log "profile $name (steps $steps, exit $?):"; grep profile $OUT/l8-profile-$name.log | tee -a $sum
}
profile offline 3,60 --requests 1024 --input-len 128 --output-len 128 --max-sequences 1024 --warmup-requests 0
profile long 60 --requests 64 --input-len 2048 --output-len 128 --max-sequences 64 --warmup-requests 0
profile bs1 40,65 --requests 2 --input-len 128 --output-len 64 --batch 1 --warmup-requests 0
profile ttft 2 --requests 2 --input-len 2048 --output-len 1 --batch 1 --warmup-requests 0
log "== end ($SECONDS s)"
pack
