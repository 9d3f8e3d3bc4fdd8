#!/usr/bin/env bash
# A model that brings its weights quantized, served: tinyllama-1.1b (random weights, exported
# here) quantized by ONNX Runtime's MatMulNBitsQuantizer (4 bits, blocks of 128, asymmetric:
# com.microsoft.MatMulNBits with zero points, the LM head included), compiled as stored
# (--dtype bf16, no --quantize) and benched at batch 1 and offline as quant-tests-and-bench.sh
# does, beside the same model compiled with --quantize int4 --group-size 128. Logs and
# bench.jsonl under $OUT.
# carry: .bundle/infer-bundle.tar.xz
set -uo pipefail
export PYTHONUNBUFFERED=1
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b
B=/tmp/b/infer-bundle
[ -f /tmp/tl/model.onnx ] || PYTHONPATH=python python3 -m infer.export bench/presets/tinyllama-1.1b.json \
  -o /tmp/tl --random-weights --dtype bf16 > $OUT/tl-export.log 2>&1
echo "export exit $? ($SECONDS s)"
mkdir -p /tmp/tlq && cp /tmp/tl/*.json /tmp/tlq/ 2>/dev/null
timeout 300 python3 - <<'PY' > $OUT/quantize.log 2>&1
import logging, onnx, time
logging.disable(logging.WARNING)
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
t = time.time()
q = MatMulNBitsQuantizer(onnx.load("/tmp/tl/model.onnx"), bits=4, block_size=128, is_symmetric=False)
q.process()
onnx.save(q.model.model, "/tmp/tlq/model.onnx", save_as_external_data=True, location="model.onnx.data")
print(f"quantized in {time.time() - t:.1f} s")
PY
echo "quantize exit $? ($SECONDS s): $(tail -1 $OUT/quantize.log)"
for tag in matmulnbits rtn; do
  if [ $tag = matmulnbits ]; then src=/tmp/tlq/model.onnx; flags=(); else src=/tmp/tl/model.onnx; flags=(--quantize int4 --group-size 128); fi
  timeout 200 $B/bin/infer-compile $src -o /tmp/tl-$tag.infer --dtype bf16 "${flags[@]}" > $OUT/$tag-compile.log 2>&1
  echo "$tag compile exit $? ($SECONDS s)"; tail -2 $OUT/$tag-compile.log
  for run in "bs1 --requests 6 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2" \
      "offline --requests 256 --input-len 128 --output-len 128 --max-sequences 256 --warmup-requests 32"; do
    set -- $run; name=$1; shift
    timeout 60 $B/bin/infer-run /tmp/tl-$tag.infer bench --device cuda "$@" > $OUT/$tag-$name.log 2>&1
    echo "$tag $name exit $? ($SECONDS s)"; grep -v '^{' $OUT/$tag-$name.log | tail -2
    tail -1 $OUT/$tag-$name.log | grep '^{' | sed "s/^{/{\"scheme\":\"$tag\",\"run\":\"$name\",/" >> $OUT/bench.jsonl
  done
done
echo "== end ($SECONDS s)"
