#!/usr/bin/env bash
# The GPU checks (goldens fp32/bf16, greedy generate) of the family models added since the last
# suite run and of test/e2e's families that had none on cuda, then tinyllama-1.1b's curve at the
# rates where HTTP and in-process part (4000 requests at saturation, 8 client processes). Every
# log goes into one tarball under $OUT (the run tool returns a limited number of files).
# carry: .bundle/infer-bundle.tar.xz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
[ -x /tmp/b/infer-bundle/bin/infer-run ] || { mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b; }
B=/tmp/b/infer-bundle; R=/tmp/results; mkdir -p $R
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
echo "== family models ($SECONDS s)"
timeout 150 bash test/gpu/run-all.sh $B/bin test/models "" tiny-gptj tiny-codegen tiny-falcon-40b tiny-bloom \
  > $R/families-new.log 2>&1; echo "families exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $R/families-new.log
timeout 120 bash test/gpu/run-all.sh $B/bin test/e2e/models "" tiny-qwen3 tiny-mistral tiny-gemma tiny-phi3 tiny-gpt-neox \
  > $R/families-e2e.log 2>&1; echo "e2e families exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $R/families-e2e.log
echo "== tinyllama curve ($SECONDS s)"
[ -f /tmp/tl/model.onnx ] || PYTHONPATH=python python3 -m infer.export bench/presets/tinyllama-1.1b.json -o /tmp/tl \
  --random-weights --dtype bf16 > $R/tl-export.log 2>&1
$B/bin/infer-compile /tmp/tl/model.onnx -o /tmp/tl.infer > $R/tl-compile.log 2>&1; echo "tl compile exit $? ($SECONDS s)"
timeout $(( 560 - SECONDS )) bench/serve-curve.sh $B/bin /tmp/tl.infer $R/tinyllama-1.1b 32000 \
  --seconds 6 --saturation-requests 4000 --processes 8 64 256 inf
echo "tl curve exit $? ($SECONDS s)"
python3 bench/plot_serve_curve.py $R/tinyllama-1.1b/curve.jsonl -o $OUT/tinyllama-1.1b.png
cp $R/tinyllama-1.1b/curve.jsonl $OUT/tinyllama-curve.jsonl 2>/dev/null
tar czf $OUT/results.tar.gz -C /tmp results
echo "== end ($SECONDS s)"
