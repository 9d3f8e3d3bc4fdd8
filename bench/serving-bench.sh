#!/usr/bin/env bash
# The issue-5 serving benchmarks on the GPU machine (bench/results/*-serving.md):
# export of a random-weight preset (bf16), compile, cold start (process start ->
# first generated token, as the wall time of a one-token generate), and
# `infer-run bench` at batch 1 (128 in / 128 out), offline (N requests of
# 128 / 128 submitted at once) and TTFT of one 2,048-token prompt; then a
# per-kernel profile of a prefill and a decode step (INFER_PROFILE_STEPS).
#
#   bench/serving-bench.sh BIN_DIR EXPORT_HF_PY PRESET RESULTS_DIR [OFFLINE_REQUESTS [BENCH_PEERS_PY]]
#
# OFFLINE_REQUESTS 0 skips the offline run. BENCH_PEERS_PY (../shared/tools/bench_peers.py,
# torch and transformers on the GPU machine) also measures HF eager and HF static cache +
# torch.compile on the same random-weight preset in this run (peers.json), then batch 1 once
# more, so that infer's batch-1 figure stands on both sides of the peers' (issue 5 asks for
# them in the same run). Writes summary.txt and one log per run.
set -uo pipefail
bin=$1; export_hf=$2; preset=$3; res=$4; offline=${5:-512}; peers=${6:-}
mkdir -p "$res"; sum=$res/summary.txt; : > "$sum"
log() { echo "$*" | tee -a "$sum"; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
work=/tmp/infer-serving-bench; mkdir -p "$work"
model=$work/$preset.onnx; artifact=$work/$preset.infer
if [ ! -f "$model" ]; then
  start=$(date +%s.%N)
  PYTHONUNBUFFERED=1 python3 "$export_hf" --preset $preset --dtype bfloat16 --goldens 0 --out "$work" \
    > "$res/export.log" 2>&1 || { log "export failed"; tail -20 "$res/export.log"; exit 1; }
  log "export: $(seconds "$start" "$(date +%s.%N)") s"
fi
/usr/bin/time -v -o "$res/time-compile.txt" "$bin/infer-compile" "$model" --dtype bf16 -o "$artifact" \
  > "$res/compile.log" 2>&1 || { log "compile failed"; cat "$res/compile.log"; exit 1; }
log "compile: $(grep -m1 'Elapsed (wall' "$res/time-compile.txt" | sed 's/.*: //') wall," \
    "peak RSS $(grep -m1 'Maximum resident' "$res/time-compile.txt" | sed 's/.*: //') KiB;" \
    "artifact $(stat -c %s "$artifact") bytes"
vocab=$("$bin/infer-run" "$artifact" info | sed -n 's/.*output logits: [a-z0-9]*\[batch, seq, \([0-9]*\)\].*/\1/p' | head -1)
ids=$(python3 -c "import random; r=random.Random(1); print(','.join(str(r.randrange($vocab)) for _ in range(128)))")
# Cold start: the artifact was just written, so it is in the page cache (a
# first read from disk adds the disk's time for its size).
for i in 1 2; do
  start=$(date +%s.%N)
  "$bin/infer-run" "$artifact" generate --prompt-ids "$ids" --max-new-tokens 1 --max-sequences 1 \
    > "$res/cold-start.log" 2>&1 || { log "cold start failed"; cat "$res/cold-start.log"; }
  log "cold start $i (process start -> first token -> exit): $(seconds "$start" "$(date +%s.%N)") s"
done
run_bench() { # NAME ARGS...
  local name=$1; shift
  "$bin/infer-run" "$artifact" bench --device cuda "$@" > "$res/$name.log" 2>&1 \
    || { log "$name failed"; tail -5 "$res/$name.log"; return; }
  log "$name: $*"; grep -v '^{' "$res/$name.log" | tee -a "$sum" >/dev/null
  tail -1 "$res/$name.log" >> "$res/bench.jsonl"
}
: > "$res/bench.jsonl"
batch1=(--requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2)
run_bench bs1 "${batch1[@]}"
[ "$offline" -gt 0 ] && run_bench offline --requests "$offline" --input-len 128 --output-len 128 \
  --max-sequences "$offline" --warmup-requests "$offline"
run_bench ttft2048 --requests 3 --input-len 2048 --output-len 1 --batch 1 --warmup-requests 1
# Per-kernel time of steps (events around each launch, no graph): batch 1,
# two requests of 64 tokens: step 40 = a decode, step 65 = the second
# request's 128-token prefill (GEMMs tuned by the first).
INFER_PROFILE_STEPS=40,65 "$bin/infer-run" "$artifact" bench --device cuda --requests 2 \
  --input-len 128 --output-len 64 --batch 1 > "$res/profile-bs1.log" 2>&1
grep profile "$res/profile-bs1.log" | tee -a "$sum"
if [ "$offline" -gt 0 ]; then
  # Step 3: a prefill step of 8,192 tokens (64 prompts); step 60: a decode of 512.
  INFER_PROFILE_STEPS=3,60 "$bin/infer-run" "$artifact" bench --device cuda --requests "$offline" \
    --input-len 128 --output-len 128 --max-sequences "$offline" > "$res/profile-offline.log" 2>&1
  grep profile "$res/profile-offline.log" | tee -a "$sum"
fi
if [ -n "$peers" ]; then
  start=$(date +%s.%N)
  PYTHONUNBUFFERED=1 python3 "$peers" "$preset" --json "$res/peers.json" > "$res/peers.log" 2>&1 \
    || { log "peers failed"; tail -5 "$res/peers.log"; }
  log "peers, $(seconds "$start" "$(date +%s.%N)") s: $(grep "^$preset " "$res/peers.log")"
  run_bench bs1-after-peers "${batch1[@]}"
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv >> "$sum" 2>&1
cat "$sum"
