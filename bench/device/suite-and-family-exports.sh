#!/usr/bin/env bash
# The whole GPU suite (test/gpu/run-all.sh) while the random-weight exports of issue 46's real-shape
# models run beside it at nice 19 into /tmp/g2 (gemma2-2b) and /tmp/q3 (qwen3-30b-a3b-8l), one
# after the other, for real-shape-families.sh on the same warm machine next.
#   suite-and-family-exports.sh [NAME...]   with names, only those checks (run-all.sh's model
#                                           names, `quant`, `kv-fp8`) instead of the whole suite
# With FUZZ_BIN (tools/make-fuzz-bundle.sh's tarball; docs/fuzzing.md) the spare cores run
# fuzz-on-device.sh beside it all. EXPORTS (default "gemma2-2b:/tmp/g2 qwen3-30b-a3b-8l:/tmp/q3")
# picks the exports.
# carry: .bundle/infer-bundle.tar.xz
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b
B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
git log -1 --format='commit %h %s' 2>/dev/null | cut -c1-100
export_one() { # PRESET DIR
  [ -f "$2/model.onnx" ] && return 0
  local start=$SECONDS
  PYTHONPATH=python nice -n 19 python3 -m infer.export "bench/presets/$1.json" -o "$2" --random-weights \
    --dtype bf16 > "$OUT/export-$1.log" 2>&1
  echo "export $1: exit $? in $((SECONDS - start)) s" >> "$OUT/exports.txt"
}
( for e in ${EXPORTS:-gemma2-2b:/tmp/g2 qwen3-30b-a3b-8l:/tmp/q3}; do export_one "${e%%:*}" "${e#*:}"; done ) &
export_pid=$!
fuzz_pid=
if [ -n "${FUZZ_BIN:-}" ] && [ -f "$FUZZ_BIN" ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-540} bash bench/device/fuzz-on-device.sh "$FUZZ_BIN" > "$OUT/fuzz.txt" 2>&1 &
  fuzz_pid=$!
fi
echo "== gpu suite ($SECONDS s)"
timeout $(( 560 - SECONDS )) bash test/gpu/run-all.sh $B/bin test/models "" "$@" > $OUT/gpu_suite.log 2>&1
echo "suite exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $OUT/gpu_suite.log | head -30
left=$(( 590 - SECONDS )); [ $left -lt 1 ] && left=1
timeout $left tail --pid=$export_pid -f /dev/null
cat $OUT/exports.txt 2>/dev/null
kill -0 $export_pid 2>/dev/null && echo "exports still running at $SECONDS s"
tail -n 2 $OUT/export-*.log; ls -la /tmp/g2 /tmp/q3 2>/dev/null | grep onnx
[ -n "$fuzz_pid" ] && { wait $fuzz_pid; cat $OUT/fuzz.txt; }
tar czf $OUT/results.tar.gz -C $OUT --exclude results.tar.gz . 2>/dev/null
echo "== end ($SECONDS s)"
