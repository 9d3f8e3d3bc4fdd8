#!/usr/bin/env bash
# tinyllama-1.1b's throughput-latency curve (tinyllama-curve.sh's export and rates, 4000 requests
# at saturation), then llama3-8b's compile and curve from /tmp/l8 (suite-and-l8-export.sh's export,
# on the same warm machine). carry: .bundle/infer-bundle.tar.xz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
[ -x /tmp/b/infer-bundle/bin/infer-run ] || { mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b; }
B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
PYTHONPATH=python python3 -m infer.export bench/presets/tinyllama-1.1b.json -o /tmp/tl --random-weights \
  --dtype bf16 > $OUT/tl-export.log 2>&1; echo "tl export exit $? ($SECONDS s)"
$B/bin/infer-compile /tmp/tl/model.onnx -o /tmp/tl.infer > $OUT/tl-compile.log 2>&1
echo "tl compile exit $? ($SECONDS s)"
timeout $(( 260 - SECONDS )) bench/serve-curve.sh $B/bin /tmp/tl.infer $OUT/tinyllama-1.1b 32000 \
  --seconds 6 --saturation-requests 4000 --processes 8 16 64 256 inf
echo "tl curve exit $? ($SECONDS s)"
if [ -f /tmp/l8/model.onnx ]; then
  /usr/bin/time -v -o $OUT/l8-compile-time.txt $B/bin/infer-compile /tmp/l8/model.onnx -o /tmp/l8.infer > $OUT/l8-compile.log 2>&1
  echo "l8 compile exit $? ($SECONDS s)"; grep -E "Elapsed|Maximum res" $OUT/l8-compile-time.txt
  timeout $(( 588 - SECONDS )) bench/serve-curve.sh $B/bin /tmp/l8.infer $OUT/llama3-8b 128256 \
    --seconds 8 --saturation-requests 1000 --processes 8 4 16 64 inf
  echo "l8 curve exit $? ($SECONDS s)"
else
  echo "no /tmp/l8/model.onnx: llama3-8b skipped"
fi
for d in $OUT/tinyllama-1.1b $OUT/llama3-8b; do
  [ -f $d/curve.jsonl ] && python3 bench/plot_serve_curve.py $d/curve.jsonl -o $d.png
done
echo "== end ($SECONDS s)"
