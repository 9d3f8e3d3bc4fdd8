#!/usr/bin/env bash
# The README's main job: set up, build, import the bundled tiny-llama and run
# it on the CPU reference interpreter, printing the top token at each position.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh infer-compile infer-run
build_dir="${INFER_BUILD_DIR:-build}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
prompt="${PROMPT_IDS:-1,15,42,7,300,11,5}"
python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.array([[int(t) for t in sys.argv[2].split(',')]], dtype=np.int64))" \
  "$work/ids.npy" "$prompt"
"$build_dir/bin/infer-compile" models/tiny-llama/tiny-llama.onnx --check
"$build_dir/bin/infer-compile" models/tiny-llama/tiny-llama.onnx --reference-run \
  --input input_ids="$work/ids.npy" --output logits="$work/logits.npy"
# The same model after the optimization pipeline (fused ops), fed back in.
"$build_dir/bin/infer-compile" models/tiny-llama/tiny-llama.onnx --emit=optimized > "$work/optimized.mlir"
echo "optimized IR: $(grep -oE 'graph\.(rms_norm|linear|rotary|attention|gated_activation|embedding)' "$work/optimized.mlir" | sort | uniq -c | tr -s ' ' | tr '\n' ',')"
"$build_dir/bin/infer-compile" "$work/optimized.mlir" --reference-run \
  --input input_ids="$work/ids.npy" --output logits="$work/optimized.npy"
# The one-file artifact (with GPU code when built with CUDA), run by infer-run:
# on the GPU when there is one, else with the cpu backend.
"$build_dir/bin/infer-compile" models/tiny-llama/tiny-llama.onnx -o "$work/tiny-llama.infer"
"$build_dir/bin/infer-run" "$work/tiny-llama.infer" forward \
  --input input_ids="$work/ids.npy" --output logits="$work/runtime.npy"
python3 - "$work/logits.npy" "$work/optimized.npy" "$work/runtime.npy" "$prompt" <<'PY'
import sys, numpy as np
logits, fused, run = (np.load(p)[0] for p in sys.argv[1:4])
for pos, (tok, row, frow, rrow) in enumerate(zip(sys.argv[4].split(","), logits, fused, run)):
    print(f"position {pos}: input {tok:>4} -> top token {int(row.argmax()):>4} (logit {row.max():.4f}); "
          f"optimized graph: {int(frow.argmax()):>4}; infer-run: {int(rrow.argmax()):>4}")
print(f"max |imported - optimized| = {np.abs(logits - fused).max():.2e}, "
      f"max |imported - infer-run| = {np.abs(logits - run).max():.2e}")
PY
# Greedy generation through the step program (paged KV cache, continuous
# batching scheduler): on the GPU when there is one, else with the cpu backend.
"$build_dir/bin/infer-run" "$work/tiny-llama.infer" generate \
  --prompt-ids "$prompt" --max-new-tokens 16
