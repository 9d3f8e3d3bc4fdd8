#!/usr/bin/env bash
# Issue 46's owed GPU runs, first call of two on one warm machine: the family models whose cuda
# column docs/model-coverage.md lacks or has from an older log (run-all.sh with model names:
# fp32/bf16 goldens and greedy generate), while gemma2-2b's and
# qwen3-30b-a3b-8l's random-weight exports run beside them at nice 19 into /tmp/g2 and /tmp/q3
# for real-shape-families.sh next. With FUZZ_BIN (a tarball of fuzz binaries, docs/fuzzing.md)
# the spare cores run fuzz-on-device.sh beside it all.
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
( export_one gemma2-2b /tmp/g2; export_one qwen3-30b-a3b-8l /tmp/q3 ) &
export_pid=$!
fuzz_pid=
if [ -n "${FUZZ_BIN:-}" ] && [ -f "$FUZZ_BIN" ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-540} bash bench/device/fuzz-on-device.sh "$FUZZ_BIN" > "$OUT/fuzz.txt" 2>&1 &
  fuzz_pid=$!
fi
echo "== gpu checks ($SECONDS s)"
timeout $(( 500 - SECONDS )) bash test/gpu/run-all.sh $B/bin test/models "" \
  tiny-mixtral tiny-qwen2_moe tiny-deepseek_v3-vdim > $OUT/gpu_models.log 2>&1
echo "checks exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $OUT/gpu_models.log | head -30
left=$(( 585 - SECONDS )); [ $left -lt 1 ] && left=1
timeout $left tail --pid=$export_pid -f /dev/null
cat $OUT/exports.txt 2>/dev/null
kill -0 $export_pid 2>/dev/null && echo "exports still running at $SECONDS s"
tail -2 $OUT/export-*.log; ls -la /tmp/g2 /tmp/q3 2>/dev/null | grep onnx
[ -n "$fuzz_pid" ] && { wait $fuzz_pid; cat $OUT/fuzz.txt; }
echo "== end ($SECONDS s)"
