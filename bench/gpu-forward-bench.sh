#!/usr/bin/env bash
# The issue-4 GPU benchmark on the GPU machine (bench/results/tinyllama-1.1b-forward.md):
# compile time, artifact size, load time (open -> ready) and one forward over
# batch 1 x SEQ tokens of the tinyllama-1.1b bf16 export, beside HF eager's
# forward in the same run and the FLOP floor (2 * params * tokens / 790 TFLOP/s).
#
#   bench/gpu-forward-bench.sh BIN_DIR EXPORT_HF_PY RESULTS_DIR [SEQ]
#
# BIN_DIR holds infer-compile and infer-run (the bundle's bin/). Writes
# summary.txt, compile.log, run.log, hf.json and time-compile.txt.
set -uo pipefail
bin=$1; export_hf=$2; res=$3; seq=${4:-2048}; preset=tinyllama-1.1b
mkdir -p "$res"; sum=$res/summary.txt; : > "$sum"
log() { echo "$*" | tee -a "$sum"; }
work=/tmp/infer-forward-bench; mkdir -p "$work"
model=$work/$preset.onnx
if [ ! -f "$model" ]; then
  start=$(date +%s.%N)
  PYTHONUNBUFFERED=1 python3 "$export_hf" --preset $preset --dtype bfloat16 --goldens 0 --out "$work" \
    > "$res/export.log" 2>&1 || { log "export failed"; tail -20 "$res/export.log"; exit 1; }
  log "export: $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
fi
/usr/bin/time -v -o "$res/time-compile.txt" "$bin/infer-compile" "$model" -o "$work/$preset.infer" \
  > "$res/compile.log" 2>&1 || { log "compile failed"; cat "$res/compile.log"; exit 1; }
log "compile: $(grep -m1 'Elapsed (wall' "$res/time-compile.txt" | sed 's/.*: //') wall," \
    "peak RSS $(grep -m1 'Maximum resident' "$res/time-compile.txt" | sed 's/.*: //') KiB;" \
    "artifact $(stat -c %s "$work/$preset.infer") bytes"
cat "$res/compile.log" >> "$sum"
python3 -c "import numpy as np; np.save('$work/ids.npy', np.random.default_rng(0).integers(0, 32000, (1, $seq), dtype=np.int64))"
# Load time: a cold process (open, verify, upload, kernels) to ready, then the forwards.
"$bin/infer-run" "$work/$preset.infer" forward --device cuda --input input_ids="$work/ids.npy" \
  --output logits="$work/logits.npy" --time 20 > "$res/run.log" 2>&1 || { log "run failed"; cat "$res/run.log"; exit 1; }
cat "$res/run.log" >> "$sum"
python3 "$(dirname "$0")/hf_forward.py" --export-hf "$export_hf" --preset $preset --seq "$seq" \
  > "$res/hf.json" 2> "$res/hf.err" || { log "hf failed"; tail -5 "$res/hf.err"; }
cat "$res/hf.json" >> "$sum"
python3 -c "import numpy as np; l=np.load('$work/logits.npy'); print('logits', l.shape, 'finite', bool(np.isfinite(l).all()), 'max |logit|', float(np.abs(l).max()))" >> "$sum"
cat "$sum"
