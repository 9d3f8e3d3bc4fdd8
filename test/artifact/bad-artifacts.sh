#!/usr/bin/env bash
# Bad artifacts: `infer-run X info` refuses each with exit 1 and one clear
# message (never a crash), and infer-compile leaves no partial file behind.
# usage: bad-artifacts.sh INFER_COMPILE INFER_RUN CORRUPT_ARTIFACT MODEL.onnx WORKDIR [TEXT_MODEL.onnx]
# (TEXT_MODEL: a model with its tokenizer beside it, for the text info's checks)
set -u
compile=$1 run=$2 corrupt=$3 model=$4 work=$5 text_model=${6:-}
rm -rf "$work" && mkdir -p "$work"
"$compile" "$model" -o "$work/good.infer" >/dev/null || { echo "FAIL: compile"; exit 1; }
info=$("$run" "$work/good.infer" info) || { echo "FAIL: the good artifact is refused"; exit 1; }
# The exec program's summary (tiny-llama: 2 layers).
for line in "exec program: main_graph, arena 22020096 bytes" \
            "launches: 21 (embedding 1, rms_norm 5, gemm 9, rotary 2, attention 2, gated_activation 2)" \
            "input  input_ids: buffer 0, i64" "output logits: buffer"; do
  grep -qF -- "$line" <<<"$info" || { echo "FAIL: info does not say '$line':"; echo "$info"; exit 1; }
done

failures=0
# expect NAME EXPECTED_MESSAGE_PART [COMMAND...]: runs info (or COMMAND) on $work/NAME.infer
expect() {
  local name=$1 file=$work/$1.infer pattern=$2
  shift 2
  local message rc
  message=$(timeout 60 "$run" "$file" "${@:-info}" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 1 ]; then
    echo "FAIL: $name: exit $rc (expected 1): $message"; failures=$((failures + 1))
  elif ! grep -qF -- "$pattern" <<<"$message"; then
    echo "FAIL: $name: '$message' does not say '$pattern'"; failures=$((failures + 1))
  elif [ "$(wc -l <<<"$message")" -ne 1 ]; then
    echo "FAIL: $name: more than one line: $message"; failures=$((failures + 1))
  else
    echo "ok: $name: $message"
  fi
}
for mutation in truncate truncate-header flip-header flip-payload flip-manifest magic version \
                manifest-past-eof weight-past-eof bad-manifest exec-buffer-past-arena \
                exec-bad-weight unknown-flags whole-stream-hash; do
  "$corrupt" "$work/good.infer" "$work/$mutation.infer" "$mutation" || {
    echo "FAIL: corrupt-artifact $mutation"; exit 1; }
done
expect truncate "truncated: the file has"
expect truncate-header "truncated: 60 bytes, the header needs 128"
expect flip-header "header checksum mismatch: the header is corrupted"
expect flip-payload "checksum mismatch: the file is corrupted"
expect flip-manifest "checksum mismatch: the file is corrupted"
expect magic "wrong magic: not an infer artifact"
expect version "artifact format version 99 is not supported (this build reads version 2)"
expect unknown-flags "unknown header flags 3 (this build defines flag 1, a chunked payload checksum)"
# An artifact from before the chunked checksum (flags 0, XXH64 of the payload whole) still loads.
"$run" "$work/whole-stream-hash.infer" info > /dev/null || {
  echo "FAIL: an artifact with the whole-stream payload checksum is refused"; failures=$((failures + 1)); }
expect manifest-past-eof "the manifest [128, +"
expect weight-past-eof "lies outside the weight section"
expect bad-manifest "is not a valid protobuf Manifest"
expect exec-buffer-past-arena "exec program: buffer 0 lies outside the arena (22020096 bytes at 8192 tokens)"
expect exec-bad-weight "launch 0 operand 'table' refers to no buffer, weight or constant of the artifact"
# The header: reserved bytes are zero, the weight section does not overlap
# the manifest, the padding between them is zero (each was accepted once).
for mutation in reserved-bytes weights-overlap padding-nonzero; do
  "$corrupt" "$work/good.infer" "$work/$mutation.infer" "$mutation" || {
    echo "FAIL: corrupt-artifact $mutation"; exit 1; }
done
expect reserved-bytes "the header's reserved bytes [72, 120) are not zero (byte 100 is 1)"
expect weights-overlap "the weight section at 0 overlaps the manifest [128, +"
expect padding-nonzero "the padding before the weight section is not zero (byte"

# Manifest fields, checksums fixed up so that the checks behind them run: each
# is refused at open, by info and by generate (which once aborted or ran out
# of memory on the KV layout's, e.g. block_size -1 or 2^30 layers).
for mutation in kv-block-size kv-num-layers kv-bytes-per-token kv-layer step-no-kv arena-bound \
                gemm-k norm-epsilon output-dim; do
  "$corrupt" "$work/good.infer" "$work/$mutation.infer" "$mutation" || {
    echo "FAIL: corrupt-artifact $mutation"; exit 1; }
done
field() { # field NAME MESSAGE: info and generate both refuse NAME with MESSAGE
  expect "$1" "$2"
  expect "$1" "$2" generate --prompt-ids 1,2 --device cpu
}
field kv-block-size "kv cache: block_size is -1, outside [1, 65536]"
field kv-num-layers "kv cache: num_layers is 1073741824, outside [1, 65536]"
field kv-bytes-per-token "kv cache: bytes_per_token is"
field kv-layer "(kv_attention) names KV layer 7 of 2"
field step-no-kv "a step program without a KV cache layout"
field arena-bound "exec program: the arena has no valid size at its bound of 1099511627776 tokens"
field gemm-k "attribute 'k' is -5, outside [1, 16777216]"
field norm-epsilon "attribute 'epsilon' is not a finite number"
field output-dim "model: a dim of 'logits' is 1099511627776, outside [0, 16777216]"
if [ -n "$text_model" ]; then
  "$compile" "$text_model" -o "$work/text.infer" --target cpu >/dev/null 2>&1 ||
    { echo "FAIL: compile $text_model"; exit 1; }
  "$corrupt" "$work/text.infer" "$work/stop-token.infer" stop-token ||
    { echo "FAIL: corrupt-artifact stop-token"; exit 1; }
  field stop-token "text: stop token id -3 is negative"
fi

# A cuda artifact (infer-compile built with the CUDA toolkit): its GPU code must match the program.
if grep -q "^cuda: sm_" <<<"$info"; then
  "$corrupt" "$work/good.infer" "$work/cuda-launch-records.infer" cuda-launch-records ||
    { echo "FAIL: corrupt-artifact cuda-launch-records"; exit 1; }
  expect cuda-launch-records "GPU code: 20 launch records for 21 launches"
  "$corrupt" "$work/good.infer" "$work/cuda-empty-cubin.infer" cuda-empty-cubin ||
    { echo "FAIL: corrupt-artifact cuda-empty-cubin"; exit 1; }
  expect cuda-empty-cubin "GPU code: extra cubin 0 is empty or names no kernel"
  "$corrupt" "$work/good.infer" "$work/cuda-gemv-grid.infer" cuda-gemv-grid ||
    { echo "FAIL: corrupt-artifact cuda-gemv-grid"; exit 1; }
  expect cuda-gemv-grid "'s GEMV grid is not a constant size"
fi
: >"$work/empty.infer"
expect empty "truncated: the file is empty"
expect missing "cannot open '$work/missing.infer': No such file or directory"
head -c 5000 /dev/urandom >"$work/random.infer"
expect random "wrong magic"
# Every message names the file.
message=$("$run" "$work/truncate.infer" info 2>&1 >/dev/null)
grep -qF "$work/truncate.infer" <<<"$message" || { echo "FAIL: the message does not name the file"; failures=$((failures + 1)); }

# Unknown commands are refused with exit 2.
message=$("$run" "$work/good.infer" fly 2>&1 >/dev/null); rc=$?
if [ "$rc" -ne 2 ] || ! grep -qF "unknown command 'fly'" <<<"$message"; then
  echo "FAIL: unknown command: exit $rc: $message"; failures=$((failures + 1))
fi

# A failed write leaves nothing behind (a directory that does not exist, and
# an output path that is a directory).
"$compile" "$model" -o "$work/no-such-dir/m.infer" >/dev/null 2>&1 && {
  echo "FAIL: writing into a missing directory succeeded"; failures=$((failures + 1)); }
mkdir -p "$work/out-is-dir.infer"
"$compile" "$model" -o "$work/out-is-dir.infer" >/dev/null 2>&1 && {
  echo "FAIL: writing over a directory succeeded"; failures=$((failures + 1)); }
leftovers=$(find "$work" -name '*.tmp*')
[ -z "$leftovers" ] || { echo "FAIL: temporary files left: $leftovers"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all bad artifacts refused"
