#!/usr/bin/env bash
# text-and-serve.sh (text e2e, openai serve check), then the GPU suite and tinyllama-1.1b's
# throughput-latency curve on the artifact the e2e wrote.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
bash "$(dirname "$0")/text-and-serve.sh"
tar xJf .bundle/kernels.tar.xz -C /tmp/b
B=/tmp/b/infer-bundle
echo "== gpu suite ($SECONDS s)"
left=$(( 380 - SECONDS )); [ $left -lt 30 ] && left=30
timeout $left bash test/gpu/run-all.sh $B/bin test/models /tmp/b/kernels > $OUT/gpu_suite.log 2>&1
echo "suite exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $OUT/gpu_suite.log | head -20
echo "== tinyllama curve ($SECONDS s)"
[ $SECONDS -lt 300 ] && timeout $(( 400 - SECONDS )) bench/serve-curve.sh $B/bin /tmp/e2e/tinyllama.infer $OUT/tinyllama-1.1b 32000 \
  --seconds 8 4 16 64 128 inf
python3 bench/plot_serve_curve.py $OUT/*/curve.jsonl -o $OUT/serve-curves.png
echo "== end ($SECONDS s)"
