#!/usr/bin/env bash
# issue 43's text e2e, then issue 45's openai check.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b; B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
timeout 170 python3 test/gpu/check_text_e2e.py --bin $B/bin --library $B/lib/libinfer.so \
  --tokenizer test/tokenizer/fixtures/llama2 --out /tmp/e2e > $OUT/text_e2e.log 2>&1; echo "e2e exit $? ($SECONDS s)"; tail -14 $OUT/text_e2e.log
# The openai check needs .whl/ in carry; a run that carries only .bundle/ (the upload limit) skips it.
ls .whl/*.whl > /dev/null 2>&1 || { echo "no .whl/: openai check skipped"; exit 0; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site timeout $(( 235 - SECONDS )) python3 test/gpu/check_serve_gpu.py --infer-run $B/bin/infer-run \
  --artifact /tmp/e2e/tinyllama.infer > $OUT/serve_gpu.log 2>&1; echo "serve check exit $? ($SECONDS s)"; grep -E "FAIL|passed|failed|chat \{|concurrent" $OUT/serve_gpu.log
