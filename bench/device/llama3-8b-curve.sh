#!/usr/bin/env bash
# llama3-8b bf16: compile and throughput-latency curve (needs /tmp/l8 from the export, README.md).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
B=/tmp/b/infer-bundle
[ -f /tmp/l8/model.onnx ] || { echo "no llama3-8b export (fresh machine?)"; exit 1; }
nvidia-smi --query-gpu=name,uuid --format=csv
/usr/bin/time -v -o $OUT/l8-compile-time.txt $B/bin/infer-compile /tmp/l8/model.onnx -o /tmp/l8.infer > $OUT/l8-compile.log 2>&1
echo "compile exit $? ($SECONDS s)"; grep -E "Elapsed|Maximum res" $OUT/l8-compile-time.txt
timeout $(( 585 - SECONDS )) bench/serve-curve.sh $B/bin /tmp/l8.infer $OUT/llama3-8b 128256 --seconds 8 2 8 32 64 inf
python3 bench/plot_serve_curve.py $OUT/*/curve.jsonl -o $OUT/serve-curves-l8.png
echo "== end ($SECONDS s)"
