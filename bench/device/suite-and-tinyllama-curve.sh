#!/usr/bin/env bash
# text e2e, openai serve check, GPU suite, tinyllama-1.1b's throughput-latency curve.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || echo "wheels failed"
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b && tar xJf .bundle/kernels.tar.xz -C /tmp/b
B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid,memory.total,clocks.sm,clocks.mem --format=csv > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
echo "== text e2e ($SECONDS s)"
timeout 200 python3 test/gpu/check_text_e2e.py --bin $B/bin --library $B/lib/libinfer.so \
  --tokenizer test/tokenizer/fixtures/llama2 --out /tmp/e2e > $OUT/text_e2e.log 2>&1; echo "e2e exit $?"; tail -12 $OUT/text_e2e.log
echo "== serve openai ($SECONDS s)"
PYTHONPATH=/tmp/site timeout 100 python3 test/gpu/check_serve_gpu.py --infer-run $B/bin/infer-run \
  --artifact /tmp/e2e/tinyllama.infer > $OUT/serve_gpu.log 2>&1; echo "serve check exit $?"; grep -E "FAIL|passed|failed|chat \{" $OUT/serve_gpu.log
echo "== gpu suite ($SECONDS s)"
left=$(( 380 - SECONDS )); [ $left -lt 30 ] && left=30
timeout $left bash test/gpu/run-all.sh $B/bin test/models /tmp/b/kernels > $OUT/gpu_suite.log 2>&1
echo "suite exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $OUT/gpu_suite.log | head -20
echo "== tinyllama curve ($SECONDS s)"
[ $SECONDS -lt 300 ] && timeout $(( 400 - SECONDS )) bench/serve-curve.sh $B/bin /tmp/e2e/tinyllama.infer $OUT/tinyllama-1.1b 32000 \
  --seconds 8 4 16 64 128 inf
python3 bench/plot_serve_curve.py $OUT/*/curve.jsonl -o $OUT/serve-curves.png
echo "== end ($SECONDS s)"
