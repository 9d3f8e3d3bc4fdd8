#!/usr/bin/env bash
# Two compiles of the same model with the same options are byte-identical,
# whatever the output path; different options give different files.
# usage: determinism.sh INFER_COMPILE MODEL.onnx WORKDIR
set -eu
compile=$1 model=$2 work=$3
rm -rf "$work" && mkdir -p "$work/a" "$work/b"
for options in "" "--target cpu" "--dtype bf16" "--dtype fp16 --max-seq-len 2048"; do
  # shellcheck disable=SC2086
  "$compile" "$model" -o "$work/a/m.infer" $options >/dev/null
  # shellcheck disable=SC2086
  "$compile" "$model" -o "$work/b/other-name.infer" $options >/dev/null
  cmp "$work/a/m.infer" "$work/b/other-name.infer" || {
    # For diagnosis: sizes and how many bytes differ, and the files are kept.
    ls -l "$work/a/m.infer" "$work/b/other-name.infer"
    echo "$(cmp -l "$work/a/m.infer" "$work/b/other-name.infer" | wc -l) bytes differ; first: $(cmp -l "$work/a/m.infer" "$work/b/other-name.infer" | head -5 | tr '\n' ' ')"
    echo "FAIL: two compiles with options '$options' differ"; exit 1; }
  cp "$work/a/m.infer" "$work/a/m-${options// /_}.infer"
  echo "ok: identical with options '$options'"
done
if cmp -s "$work/a/m-.infer" "$work/a/m---dtype_bf16.infer"; then
  echo "FAIL: --dtype bf16 gives the same file as no --dtype"; exit 1
fi
echo "deterministic"
