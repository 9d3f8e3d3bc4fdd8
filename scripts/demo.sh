#!/usr/bin/env bash
# The README's main job: set up, build, and walk the path from a model to text
# on the bundled tiny-llama (models/tiny-llama: an ONNX export with random
# weights and its own 512-token tokenizer and chat template beside it):
#   1. the ONNX on the CPU reference interpreter, the optimized graph and the
#      compiled artifact agree on the top token at each position;
#   2. infer-compile stores the tokenizer beside the model in the artifact;
#   3. infer-run generate --prompt "..." streams text; a chat turn through the
#      template; the JSON with ids and text.
#   4. models/kjv-tiny, a small Llama trained on the KJV Bible: text that reads
#      as text, in full precision and as int4 (--quantize, AWQ) on the cpu backend.
# On the GPU when there is one, else with the cpu backend. With torch and
# transformers installed, `python -m infer.export` makes such a directory from
# a Hugging Face checkpoint (README.md); the bundled ONNX stands in for it here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh infer-compile infer-run
build_dir="${INFER_BUILD_DIR:-build}"
bin="$build_dir/bin"
model=models/tiny-llama/tiny-llama.onnx
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
prompt="${PROMPT:-The Licensor grants You a license to}"

echo "== 1. the model: import, reference run, optimize, compile, run"
"$bin/infer-compile" "$model" --check
"$bin/infer-run" tokenize --tokenizer models/tiny-llama <<< "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$prompt")" \
  > "$work/ids.json"
python3 -c "import json, numpy as np, sys; np.save(sys.argv[2], np.array([json.load(open(sys.argv[1]))], dtype=np.int64))" \
  "$work/ids.json" "$work/ids.npy"
"$bin/infer-compile" "$model" --reference-run --input input_ids="$work/ids.npy" --output logits="$work/logits.npy"
"$bin/infer-compile" "$model" --emit=optimized > "$work/optimized.mlir"
echo "optimized IR: $(grep -oE 'graph\.(rms_norm|linear|rotary|attention|gated_activation|embedding)' "$work/optimized.mlir" | sort | uniq -c | tr -s ' ' | tr '\n' ',')"
"$bin/infer-compile" "$work/optimized.mlir" --reference-run --input input_ids="$work/ids.npy" --output logits="$work/optimized.npy"
echo "== 2. compile: the tokenizer files beside the model go into the artifact"
"$bin/infer-compile" "$model" -o "$work/tiny-llama.infer"
"$bin/infer-run" "$work/tiny-llama.infer" info | grep -A2 '^text:'
"$bin/infer-run" "$work/tiny-llama.infer" forward --input input_ids="$work/ids.npy" --output logits="$work/runtime.npy"
python3 - "$work/logits.npy" "$work/optimized.npy" "$work/runtime.npy" <<'PY'
import sys, numpy as np
logits, fused, run = (np.load(p)[0] for p in sys.argv[1:4])
agree = sum(int(a.argmax()) == int(b.argmax()) == int(c.argmax()) for a, b, c in zip(logits, fused, run))
print(f"top token at {agree} of {len(logits)} positions the same on the reference interpreter, the "
      f"optimized graph and infer-run; max |imported - optimized| = {np.abs(logits - fused).max():.2e}, "
      f"max |imported - infer-run| = {np.abs(logits - run).max():.2e}")
PY
echo "== 3. text in, text out (random weights: the words are noise, the path is real)"
echo "prompt: $prompt"
"$bin/infer-run" "$work/tiny-llama.infer" generate --prompt "$prompt" --max-new-tokens 32 \
  --temperature 0.8 --seed 1
echo "chat (the template of models/tiny-llama/tokenizer_config.json):"
"$bin/infer-run" "$work/tiny-llama.infer" generate --chat --system "Answer in one line." \
  --prompt "What does the License grant?" --max-new-tokens 24 --stop "<|im_end|>"
echo "ids and text as JSON:"
"$bin/infer-run" "$work/tiny-llama.infer" generate --prompt "$prompt" --max-new-tokens 8 --output json
echo "== 4. a model that has learned something: models/kjv-tiny (a 1.9M-parameter Llama trained on"
echo "   the King James Bible; models/kjv-tiny/README.md), in full precision and quantized to int4"
kjv=models/kjv-tiny
"$bin/infer-compile" "$kjv/model.onnx" -o "$work/kjv.infer"
"$bin/infer-run" "$work/kjv.infer" generate --prompt "And God said" --max-new-tokens 32 --greedy
echo "int4 (groups of 32, AWQ scales from $kjv/calibration.txt; the report compares it with the full model):"
"$bin/infer-compile" "$kjv/model.onnx" --target cpu --quantize int4 --group-size 32 --method awq \
  --calibration "$kjv/calibration.txt" -o "$work/kjv-int4.infer" 2>&1 | grep -E '^(awq|quantization)'
"$bin/infer-run" "$work/kjv-int4.infer" generate --prompt "And God said" --max-new-tokens 32 --greedy \
  --device cpu
