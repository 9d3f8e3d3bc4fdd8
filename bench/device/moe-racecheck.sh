#!/usr/bin/env bash
# The MoE route kernel's racecheck (tiny-mixtral bf16) and the bf16 goldens of the MoE models
# whose tolerance follows PyTorch's own bf16 deviation (test/models/*.bf16.json): a short run for
# the fixes of session 55. carry: .bundle/infer-bundle.tar.xz
set -uo pipefail
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b
B=/tmp/b/infer-bundle/bin
nvidia-smi --query-gpu=name --format=csv,noheader
check() { python3 test/gpu/check_gpu.py --infer-compile $B/infer-compile --infer-run $B/infer-run "$@" 2>&1 | grep -E "PASS|FAIL|Race|hazard" | head -4; }
for m in tiny-mixtral tiny-qwen2_moe; do
  $B/infer-compile test/models/$m.onnx -o /tmp/$m.infer --target cuda --dtype bf16 > /dev/null 2>&1
  check --model test/models/$m.onnx --input test/models/$m.in0.npy --golden test/models/$m.out0.npy --dtype bf16 --artifact /tmp/$m.infer
done
check --model test/models/tiny-mixtral.onnx --input test/models/tiny-mixtral.in0.npy --golden test/models/tiny-mixtral.out0.npy --dtype bf16 --artifact /tmp/tiny-mixtral.infer --sanitizer racecheck
echo "end ($SECONDS s)"
