#!/usr/bin/env bash
# Issue 48's llama3-8b rows on one GPU, each scheme of one export (random bf16 weights, exported
# here into /tmp/l8 at the lowest CPU priority while the first steps run): the nvcc kernel tests
# of .bundle/kernels.tar.xz (each quantized_gemm_test* build: checks and timings) and
# `run-all.sh ... quant`, then llama3-8b int4 g128 (RTN) at batch 1 (the LM head in bf16, then
# quantized too: --quantize-lm-head), FP8 W8A8 at batch 1 and
# offline (1,024 requests of 128 / 128), bf16 beside them, and bf16 weights with an FP8 KV cache
# against the bf16 KV cache on 64 requests of 2,048 in / 128 out (TPOT and KV blocks). In that
# order: fp8 (its large steps on cuBLASLt's FP8 GEMM), fp8 with --no-fp8-gemm offline (on a
# weight dequantized to bf16), bf16, the FP8 KV cache, then int4 and int4h. STEPS picks some of
# kernels suite fp8cc fp8 fp8deq bf16 kvfp8 int4 int4h (all but fp8cc, fp8 decode on CUDA cores
# with --no-fp8-mma-gemv, by default).
# Steps that finished on this machine are skipped (markers in /tmp/l8q-done), so a second call
# on the warm machine goes on where the first stopped. carry: .bundle. Logs, bench.jsonl and
# summary.txt under $OUT as all.tgz.
set -uo pipefail
LIMIT=585; . bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
log "commit $(git log -1 --format=%h 2>/dev/null)"
mkdir -p /tmp/l8q-done
STEPS=" ${STEPS:-kernels suite fp8 fp8deq bf16 kvfp8 int4 int4h} "
done_() { [ -f /tmp/l8q-done/$1 ] || [[ "$STEPS" != *" $1 "* ]]; } # finished, or not asked for
mark() { touch /tmp/l8q-done/$1; }
left() { [ $(( LIMIT - SECONDS )) -gt $1 ]; } # at least $1 seconds of the call left

if ! grep -qx "exit 0" /tmp/l8-export.log 2>/dev/null && ! pgrep -f "infer.export bench/presets/llama3-8b" > /dev/null; then
  (PYTHONPATH=python nice -n 19 python3 -m infer.export bench/presets/llama3-8b.json -o /tmp/l8 \
    --random-weights --dtype bf16 --tokenizer test/tokenizer/fixtures/llama3 > /tmp/l8-export.log 2>&1;
   echo "exit $?" >> /tmp/l8-export.log) &
  log "llama3-8b export started"
fi

if ! done_ kernels && [ -f .bundle/kernels.tar.xz ]; then
  mkdir -p /tmp/k && tar xJf .bundle/kernels.tar.xz -C /tmp/k
  for t in /tmp/k/quantized_gemm_test*; do
    n=$(basename $t)
    timeout 150 $t > $OUT/$n.log 2>&1
    log "$n exit $?: $(grep -c '^PASS' $OUT/$n.log) passed, $(grep -c '^FAIL' $OUT/$n.log) failed"
    grep -E '^FAIL|^timing: int4' $OUT/$n.log | sed "s/^/$n /" | tee -a $sum
  done
  mark kernels
fi
if ! done_ suite; then
  timeout 300 bash test/gpu/run-all.sh $B/bin test/models "" tiny-llama quant > $OUT/gpu-quant.log 2>&1
  log "run-all.sh quant exit $? ($SECONDS s): $(grep -E 'gpu tests:' $OUT/gpu-quant.log)"
  grep -E '^FAIL' $OUT/gpu-quant.log | head -20 | tee -a $sum
  mark suite
fi

while pgrep -f "infer.export bench/presets/llama3-8b" > /dev/null; do
  left 60 || { log "export still running at $SECONDS s"; tail -2 /tmp/l8-export.log | tee -a $sum; pack; exit 0; }
  sleep 5
done
grep -qx "exit 0" /tmp/l8-export.log || { log "no export: $(tail -2 /tmp/l8-export.log)"; pack; exit 0; }
log "export: $(tail -1 /tmp/l8-export.log) ($SECONDS s)"

compile() { # NAME FLAGS...: /tmp/NAME.infer
  local name=$1; shift
  [ -f /tmp/$name.infer ] && return 0
  timeout $(( LIMIT - SECONDS )) /usr/bin/time -f "%e s wall, %M KiB peak" $B/bin/infer-compile /tmp/l8/model.onnx --dtype bf16 "$@" \
    -o /tmp/$name.infer > $OUT/$name-compile.log 2>&1
  local rc=$?
  log "$name compile exit $rc: $(tail -1 $OUT/$name-compile.log) ($SECONDS s)"
  [ $rc = 0 ]
}
profile() { # NAME: the decode step launch by launch
  INFER_PROFILE_STEPS=40 timeout 60 $B/bin/infer-run /tmp/$1.infer bench --device cuda --requests 2 \
    --input-len 128 --output-len 64 --batch 1 > $OUT/$1-profile.txt 2>&1
}
BS1=(--requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2)
OFFLINE=(--requests 1024 --input-len 128 --output-len 128 --max-sequences 1024 --warmup-requests 256)
LONG=(--requests 64 --input-len 2048 --output-len 128 --max-sequences 64 --warmup-requests 8)

if ! done_ fp8cc && left 150 && compile l8-fp8cc --quantize fp8 --no-fp8-mma-gemv; then
  bench l8-fp8cc-bs1 /tmp/l8-fp8cc.infer "${BS1[@]}"
  profile l8-fp8cc
  rm -f /tmp/l8-fp8cc.infer; mark fp8cc
fi
if ! done_ fp8 && left 150 && compile l8-fp8 --quantize fp8; then
  bench l8-fp8-bs1 /tmp/l8-fp8.infer "${BS1[@]}"
  bench l8-fp8-offline-1024 /tmp/l8-fp8.infer "${OFFLINE[@]}"
  profile l8-fp8
  rm -f /tmp/l8-fp8.infer; mark fp8
fi
if ! done_ fp8deq && left 150 && compile l8-fp8deq --quantize fp8 --no-fp8-gemm; then
  bench l8-fp8deq-offline-1024 /tmp/l8-fp8deq.infer "${OFFLINE[@]}"
  rm -f /tmp/l8-fp8deq.infer; mark fp8deq
fi
if ! done_ bf16 && left 150 && compile l8-bf16; then
  bench l8-bf16-bs1 /tmp/l8-bf16.infer "${BS1[@]}"
  bench l8-bf16-offline-1024 /tmp/l8-bf16.infer "${OFFLINE[@]}"
  bench l8-bf16-long-64x2048 /tmp/l8-bf16.infer "${LONG[@]}"
  rm -f /tmp/l8-bf16.infer; mark bf16
fi
if ! done_ kvfp8 && left 120 && compile l8-kvfp8 --kv-cache-dtype fp8; then
  bench l8-kvfp8-long-64x2048 /tmp/l8-kvfp8.infer "${LONG[@]}"
  bench l8-kvfp8-bs1 /tmp/l8-kvfp8.infer "${BS1[@]}"
  rm -f /tmp/l8-kvfp8.infer; mark kvfp8
fi
if ! done_ int4 && left 120 && compile l8-int4 --quantize int4 --group-size 128; then
  bench l8-int4-bs1 /tmp/l8-int4.infer "${BS1[@]}"
  profile l8-int4
  rm -f /tmp/l8-int4.infer; mark int4
fi
if ! done_ int4h && left 120 && compile l8-int4h --quantize int4 --group-size 128 --quantize-lm-head; then
  bench l8-int4h-bs1 /tmp/l8-int4h.infer "${BS1[@]}"
  rm -f /tmp/l8-int4h.infer; mark int4h
fi
log "done: $(ls /tmp/l8q-done | tr '\n' ' ') ($SECONDS s)"
pack
