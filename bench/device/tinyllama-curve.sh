#!/usr/bin/env bash
# tinyllama-1.1b bf16 (random weights, bench/presets/tinyllama-1.1b.json): export, compile, and
# the throughput-latency curve through HTTP and in-process (bench/serve-curve.sh).
# carry: .bundle/infer-bundle.tar.xz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b; B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
PYTHONPATH=python python3 -m infer.export bench/presets/tinyllama-1.1b.json -o /tmp/tl --random-weights \
  --dtype bf16 > $OUT/tl-export.log 2>&1; echo "export exit $? ($SECONDS s)"
$B/bin/infer-compile /tmp/tl/model.onnx -o /tmp/tl.infer > $OUT/tl-compile.log 2>&1
echo "compile exit $? ($SECONDS s)"
timeout $(( ${CURVE_UNTIL:-300} - SECONDS )) bench/serve-curve.sh $B/bin /tmp/tl.infer $OUT/tinyllama-1.1b 32000 \
  --seconds 6 --saturation-requests 4000 --processes 8 4 16 64 256 inf
echo "curve exit $? ($SECONDS s)"
python3 bench/plot_serve_curve.py $OUT/*/curve.jsonl -o $OUT/serve-curves.png
echo "== end ($SECONDS s)"
