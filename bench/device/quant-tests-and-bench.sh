#!/usr/bin/env bash
# Issue 48 on the GPU: the quantized checks of test/gpu/run-all.sh (`quant`: forwards against ONNX
# Runtime's QDQ reference, AWQ, greedy text the same as on the cpu backend), the MoE racecheck
# owed from session 55 (moe-racecheck.sh), then tinyllama-1.1b (random weights, exported beside
# the tests at nice 19) compiled bf16, int4 g128 and fp8 and benched at batch 1 (128 in / 128
# out) and offline (256 requests at once). Logs and bench.jsonl under $OUT.
# carry: .bundle/infer-bundle.tar.xz (and .bundle/quantized_gemm_test*, the nvcc-built kernel test)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b
B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
[ -f /tmp/tl/model.onnx ] || (PYTHONPATH=python nice -n 19 python3 -m infer.export \
  bench/presets/tinyllama-1.1b.json -o /tmp/tl --random-weights --dtype bf16 > $OUT/tl-export.log 2>&1 &)
# The kernel test, and any variant of it built beside it (.bundle/quantized_gemm_test_*: the same
# test over other kernel constants, to compare their timings in one run).
for test in .bundle/quantized_gemm_test .bundle/quantized_gemm_test_*; do
  [ -x "$test" ] || continue
  name=$(basename $test)
  timeout 60 $test > $OUT/$name.log 2>&1
  echo "$name exit $? ($SECONDS s)"; grep -E "FAIL|timing|failed" $OUT/$name.log
done
timeout ${QUANT_SECONDS:-240} bash test/gpu/run-all.sh $B/bin test/models "" quant > $OUT/quant.log 2>&1
echo "quant checks exit $? ($SECONDS s)"; grep -E "^(PASS|FAIL)|gpu tests:" $OUT/quant.log | cut -c1-220
if [ "${SKIP_MOE:-0}" != 1 ]; then
  timeout 90 bash bench/device/moe-racecheck.sh > $OUT/moe-racecheck.log 2>&1
  echo "moe racecheck exit $? ($SECONDS s)"; cat $OUT/moe-racecheck.log | cut -c1-200
fi
deadline=${BENCH_UNTIL:-585}
while [ ! -f /tmp/tl/model.onnx ] && [ $SECONDS -lt $((deadline - 200)) ]; do sleep 5; done
echo "export: $(tail -1 $OUT/tl-export.log) ($SECONDS s)"
for scheme in bf16 int4 fp8; do
  flags=(); [ $scheme = int4 ] && flags=(--quantize int4 --group-size 128)
  [ $scheme = fp8 ] && flags=(--quantize fp8)
  [ $(( deadline - SECONDS )) -lt 60 ] && { echo "$scheme: skipped (time)"; continue; }
  timeout $(( deadline - SECONDS )) $B/bin/infer-compile /tmp/tl/model.onnx -o /tmp/tl-$scheme.infer \
    --dtype bf16 "${flags[@]}" > $OUT/tl-$scheme-compile.log 2>&1
  echo "$scheme compile exit $? ($SECONDS s)"; tail -2 $OUT/tl-$scheme-compile.log
  for run in "bs1 --requests 6 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2" \
      "offline --requests 256 --input-len 128 --output-len 128 --max-sequences 256 --warmup-requests 32"; do
    set -- $run; tag=$1; shift
    [ $(( deadline - SECONDS )) -lt 30 ] && { echo "$scheme $tag: skipped (time)"; continue; }
    timeout $(( deadline - SECONDS )) $B/bin/infer-run /tmp/tl-$scheme.infer bench --device cuda "$@" \
      > $OUT/tl-$scheme-$tag.log 2>&1
    echo "$scheme $tag exit $? ($SECONDS s)"; grep -v '^{' $OUT/tl-$scheme-$tag.log | tail -4
    tail -1 $OUT/tl-$scheme-$tag.log | grep '^{' | sed "s/^{/{\"scheme\":\"$scheme\",\"run\":\"$tag\",/" >> $OUT/bench.jsonl
  done
done
tar czf $OUT/logs.tar.gz -C $OUT --exclude logs.tar.gz . 2>/dev/null
echo "== end ($SECONDS s)"
