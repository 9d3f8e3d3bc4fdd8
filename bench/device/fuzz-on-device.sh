#!/usr/bin/env bash
# fuzz-on-device.sh TARBALL: issue 44's long fuzz campaign on the GPU machine's spare cores.
# TARBALL (tools/make-fuzz-bundle.sh) holds the fuzz targets linked with static LLVM/MLIR
# (bin/), test/fuzz/campaign.sh with the committed corpora, and the tokenizer fixtures. Each
# target of FUZZ_JOBS ("target:jobs ...") runs test/fuzz/campaign.sh for FUZZ_SECONDS with that
# many fork jobs, all targets at once, at nice 19; the totals (executions, edges, findings) and
# the crash inputs go to $OUT/fuzz/ (docs/fuzzing.md, bench/results/fuzz/).
set -uo pipefail
tarball=$1
seconds=${FUZZ_SECONDS:-540}
jobs=${FUZZ_JOBS:-"onnx-import-fuzzer:1 onnx-proto-fuzzer:2 tokenizer-fuzzer:2 mlir-parse-fuzzer:4 artifact-manifest-fuzzer:3"}
pkg=/tmp/fuzzpkg; rm -rf $pkg; mkdir -p $pkg && tar xJf "$tarball" -C $pkg
export INFER_TOKENIZER_FIXTURES=$pkg/test/tokenizer/fixtures
echo "fuzz on $(nproc) cores for ${seconds}s: $jobs"
pids=()
for spec in $jobs; do
  target=${spec%%:*}; n=${spec##*:}
  nice -n 19 bash $pkg/test/fuzz/campaign.sh $pkg/bin "$OUT/fuzz" "$n" "$target:$seconds" \
    > "$OUT/fuzz-$target.txt" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
for spec in $jobs; do cat "$OUT/fuzz/${spec%%:*}.log" 2>/dev/null | head -1 | sed "s/^/${spec%%:*} /"; done
