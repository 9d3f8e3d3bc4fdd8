#!/usr/bin/env bash
# text-and-serve.sh (issue 43's text e2e, issue 45's openai check), then the GPU checks of the
# family models that issue 46's changes touched (test/gpu/run-all.sh with model names).
# carry: .bundle/infer-bundle.tar.xz and .whl (no kernel tests: they would not fit the upload).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
bash "$(dirname "$0")/text-and-serve.sh"
B=/tmp/b/infer-bundle
echo "== family models ($SECONDS s)"
timeout $(( 560 - SECONDS )) bash test/gpu/run-all.sh $B/bin test/models "" \
  tiny-nemotron tiny-olmo tiny-cohere tiny-gemma2 tiny-gpt_bigcode tiny-falcon-7b tiny-falcon-rw \
  tiny-yarn tiny-mistral-window > $OUT/gpu_families.log 2>&1
echo "families exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $OUT/gpu_families.log | head -30
