#!/usr/bin/env bash
# Issue 48's int4 decode on tensor cores (infer_quantized_gemv_mma, session 65), on the machine
# carveout-ab.sh left warm (its bf16 exports in /tmp/l8-short and /tmp/tinyllama-1.1b; exported
# here when missing): each compiled `--quantize int4 --group-size 128` with and without
# `--no-quantized-mma`, batch 1 128/128 alternating, then each one's decode step launch by launch.
# With .bundle/kernels.tar.xz, each quantized_gemm_test* in it first (checks and the kernel
# timings: builds of two versions of the kernels side by side). PRESETS: the models (default both).
# carry: .bundle. Logs, bench.jsonl and summary.txt under $OUT as all.tgz.
set -uo pipefail
. bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
log "commit $(git log -1 --format=%h 2>/dev/null)"
if [ -f .bundle/kernels.tar.xz ]; then
  mkdir -p /tmp/k && tar xJf .bundle/kernels.tar.xz -C /tmp/k
  for t in /tmp/k/quantized_gemm_test*; do # each build of the test the tarball holds
    n=$(basename $t)
    timeout 120 $t > $OUT/$n.log 2>&1
    log "$n exit $?: $(grep -c '^PASS' $OUT/$n.log) passed, $(grep -c '^FAIL' $OUT/$n.log) failed"
    grep -E '^FAIL|^timing: int4' $OUT/$n.log | sed "s/^/$n /" | tee -a $sum
  done
fi
python3 -c "import json,sys; c=json.load(open('bench/presets/llama3-8b.json')); c['num_hidden_layers']=8; json.dump(c, open('/tmp/l8-short.json','w'))"
for preset in ${PRESETS:-bench/presets/tinyllama-1.1b.json /tmp/l8-short.json}; do
  m=$(basename $preset .json)
  [ $SECONDS -lt 420 ] || { log "$m skipped at $SECONDS s"; continue; }
  [ -f /tmp/$m/model.onnx ] || PYTHONPATH=python timeout 200 python3 -m infer.export $preset -o /tmp/$m \
      --random-weights --dtype bf16 > $OUT/$m-export.log 2>&1 || { log "$m export failed"; continue; }
  for form in mma cuda-cores; do
    flag=; [ $form = cuda-cores ] && flag=--no-quantized-mma
    /usr/bin/time -f "%e s %M KiB" $B/bin/infer-compile /tmp/$m/model.onnx --dtype bf16 --quantize int4 \
      --group-size 128 $flag -o /tmp/$m-int4-$form.infer > $OUT/$m-int4-$form-compile.log 2>&1 \
      || { log "$m int4 $form compile failed"; tail -3 $OUT/$m-int4-$form-compile.log | tee -a $sum; continue; }
    log "$m int4 $form compile: $(tail -1 $OUT/$m-int4-$form-compile.log)"
  done
  for round in 1 2; do
    for form in mma cuda-cores; do
      [ -f /tmp/$m-int4-$form.infer ] && bench $m-int4-$form-bs1-r$round /tmp/$m-int4-$form.infer \
        --requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2
    done
  done
  for form in mma cuda-cores; do
    [ -f /tmp/$m-int4-$form.infer ] && INFER_PROFILE_STEPS=40 timeout 60 $B/bin/infer-run /tmp/$m-int4-$form.infer \
      bench --device cuda --requests 2 --input-len 128 --output-len 64 --batch 1 2>&1 | grep 'step 40' \
      | sed "s/^/$m int4 $form: /" | tee -a $sum
  done
  rm -f /tmp/$m-int4-*.infer
done
log "== end ($SECONDS s)"
pack
