#!/usr/bin/env bash
# Bad artifacts: `infer-run X info` refuses each with exit 1 and one clear
# message (never a crash), and infer-compile leaves no partial file behind.
# usage: bad-artifacts.sh INFER_COMPILE INFER_RUN CORRUPT_ARTIFACT MODEL.onnx WORKDIR
set -u
compile=$1 run=$2 corrupt=$3 model=$4 work=$5
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
# expect NAME EXPECTED_MESSAGE_PART: runs info on $work/NAME.infer
expect() {
  local file=$work/$1.infer pattern=$2
  local message rc
  message=$("$run" "$file" info 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 1 ]; then
    echo "FAIL: $1: exit $rc (expected 1): $message"; failures=$((failures + 1))
  elif ! grep -qF -- "$pattern" <<<"$message"; then
    echo "FAIL: $1: '$message' does not say '$pattern'"; failures=$((failures + 1))
  elif [ "$(wc -l <<<"$message")" -ne 1 ]; then
    echo "FAIL: $1: more than one line: $message"; failures=$((failures + 1))
  else
    echo "ok: $1: $message"
  fi
}
for mutation in truncate truncate-header flip-header flip-payload flip-manifest magic version \
                manifest-past-eof weight-past-eof bad-manifest exec-buffer-past-arena \
                exec-bad-weight; do
  "$corrupt" "$work/good.infer" "$work/$mutation.infer" "$mutation" || {
    echo "FAIL: corrupt-artifact $mutation"; exit 1; }
done
expect truncate "truncated: the file has"
expect truncate-header "truncated: 60 bytes, the header needs 128"
expect flip-header "header checksum mismatch: the header is corrupted"
expect flip-payload "checksum mismatch: the file is corrupted"
expect flip-manifest "checksum mismatch: the file is corrupted"
expect magic "wrong magic: not an infer artifact"
expect version "artifact format version 99 is not supported (this build reads version 1)"
expect manifest-past-eof "the manifest [128, +"
expect weight-past-eof "lies outside the weight section"
expect bad-manifest "is not a valid protobuf Manifest"
expect exec-buffer-past-arena "exec program: buffer 0 lies outside the arena (22020096 bytes at 8192 tokens)"
expect exec-bad-weight "launch 0 operand 'table' refers to no buffer, weight or constant of the artifact"
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
