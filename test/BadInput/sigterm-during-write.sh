#!/usr/bin/env bash
# Sends SIGTERM to `infer-compile -o` while it writes a 256 MiB artifact and reports what is left
# in the output directory (sigterm-during-write.test).
#
#   sigterm-during-write.sh INFER_COMPILE MODEL.onnx WORK_DIR
set -u
compile=$1 model=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" || exit 2
cp "$model" "$dir/" || exit 2
# Sparse: no disk blocks, reads as zeros.
truncate -s 268435456 "$dir/big-external.onnx.data" || exit 2

"$compile" "$dir/big-external.onnx" --target cpu --no-tokenizer -o "$dir/out.infer" 2>"$dir/stderr" &
pid=$!
seen=no
for _ in $(seq 6000); do
  if compgen -G "$dir/out.infer.tmp*" >/dev/null; then
    seen=yes
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.005
done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
status=$?
echo "temporary file seen before the signal: $seen"
echo "exit status: $status"
left=$(cd "$dir" && ls -A | grep -v -e '^big-external.onnx' -e '^stderr$')
echo "left in the output directory: ${left:-nothing}"
rm -rf "$dir"
