#!/usr/bin/env bash
# Two compiles of the same model with the same options are byte-identical,
# whatever the output path and the working directory; different options give
# different files.
# usage: determinism.sh INFER_COMPILE MODEL.onnx WORKDIR [PROTO_DIR]
set -eu
compile=$(realpath "$1") model=$(realpath "$2") work=$3 proto_dir=${4:-}
# The manifest of an artifact as protobuf text (header: offset at byte 32,
# size at byte 40), for naming the fields two artifacts differ in.
manifest_text() {
  local offset size
  offset=$(od -An -t u8 -j 32 -N 8 "$1" | tr -d ' ')
  size=$(od -An -t u8 -j 40 -N 8 "$1" | tr -d ' ')
  tail -c +$((offset + 1)) "$1" | head -c "$size" |
    protoc --decode=infer.artifact.Manifest -I "$proto_dir" artifact.proto
}
rm -rf "$work" && mkdir -p "$work/a" "$work/b"
for options in "" "--target cpu" "--dtype bf16" "--dtype fp16 --max-seq-len 2048"; do
  # shellcheck disable=SC2086
  "$compile" "$model" -o "$work/a/m.infer" $options >/dev/null
  # shellcheck disable=SC2086
  (cd "$work/b" && "$compile" "$model" -o other-name.infer $options >/dev/null)
  cmp "$work/a/m.infer" "$work/b/other-name.infer" || {
    # For diagnosis: sizes and how many bytes differ, and the files are kept.
    ls -l "$work/a/m.infer" "$work/b/other-name.infer"
    echo "$(cmp -l "$work/a/m.infer" "$work/b/other-name.infer" | wc -l) bytes differ; first: $(cmp -l "$work/a/m.infer" "$work/b/other-name.infer" | head -5 | tr '\n' ' ')"
    if [ -n "$proto_dir" ] && command -v protoc >/dev/null; then
      echo "manifest fields that differ:"
      diff <(manifest_text "$work/a/m.infer") <(manifest_text "$work/b/other-name.infer") |
        grep -o '^[<>] *[a-z_]*:' | sort | uniq -c || true
    fi
    echo "FAIL: two compiles with options '$options' differ"; exit 1; }
  cp "$work/a/m.infer" "$work/a/m-${options// /_}.infer"
  echo "ok: identical with options '$options'"
done
if cmp -s "$work/a/m-.infer" "$work/a/m---dtype_bf16.infer"; then
  echo "FAIL: --dtype bf16 gives the same file as no --dtype"; exit 1
fi
echo "deterministic"
