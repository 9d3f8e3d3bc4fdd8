#!/usr/bin/env bash
# tinyllama-1.1b bf16 (random weights, bench/presets/tinyllama-1.1b.json): export, compile, and
# the throughput-latency curve through HTTP and in-process (bench/serve-curve.sh): 4000 requests at
# saturation, 8 client processes at nice 10. The logs go into one tarball under $OUT (the run tool
# returns a limited number of files), the plot and curve.jsonl beside it.
# carry: .bundle/infer-bundle.tar.xz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
[ -x /tmp/b/infer-bundle/bin/infer-run ] || { mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b; }
B=/tmp/b/infer-bundle; R=/tmp/results; mkdir -p $R
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
[ -f /tmp/tl/model.onnx ] || PYTHONPATH=python python3 -m infer.export bench/presets/tinyllama-1.1b.json -o /tmp/tl \
  --random-weights --dtype bf16 > $R/tl-export.log 2>&1
echo "export done ($SECONDS s)"
$B/bin/infer-compile /tmp/tl/model.onnx -o /tmp/tl.infer > $R/tl-compile.log 2>&1
echo "compile exit $? ($SECONDS s)"
timeout $(( ${CURVE_UNTIL:-540} - SECONDS )) bench/serve-curve.sh $B/bin /tmp/tl.infer $R/tinyllama-1.1b 32000 \
  --seconds 6 --saturation-requests 4000 --processes 8 4 16 64 256 inf
echo "curve exit $? ($SECONDS s)"
python3 bench/plot_serve_curve.py $R/tinyllama-1.1b/curve.jsonl -o $OUT/tinyllama-1.1b.png
cp $R/tinyllama-1.1b/curve.jsonl $OUT/tinyllama-curve.jsonl 2>/dev/null
tar czf $OUT/results.tar.gz -C /tmp results
echo "== end ($SECONDS s)"
