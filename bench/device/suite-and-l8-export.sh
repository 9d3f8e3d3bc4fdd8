#!/usr/bin/env bash
# The whole GPU suite (test/gpu/run-all.sh: every model's goldens, sanitizers, greedy generate, the
# switches, the tuning cache; the kernel tests when .bundle/kernels.tar.xz is carried) while llama3-8b's random-weight export runs beside it
# at the lowest CPU priority into /tmp/l8, for curves.sh on the same warm machine next.
# carry: .bundle/infer-bundle.tar.xz (with kernels.tar.xz too the upload is over 64 MiB: the kernel
# tests then run in a call of their own, bench/device/README.md).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b
kernels=; [ -f .bundle/kernels.tar.xz ] && tar xJf .bundle/kernels.tar.xz -C /tmp/b && kernels=/tmp/b/kernels
B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
git log -1 --format='commit %h %s' 2>/dev/null | cut -c1-100
( [ -f /tmp/l8/model.onnx ] || PYTHONPATH=python nice -n 19 python3 -m infer.export bench/presets/llama3-8b.json \
    -o /tmp/l8 --random-weights --dtype bf16 --tokenizer test/tokenizer/fixtures/llama3 ) > $OUT/l8-export.log 2>&1 &
export_pid=$!
echo "== gpu suite ($SECONDS s)"
timeout $(( 560 - SECONDS )) bash test/gpu/run-all.sh $B/bin test/models $kernels > $OUT/gpu_suite.log 2>&1
echo "suite exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $OUT/gpu_suite.log | head -30
left=$(( 590 - SECONDS )); [ $left -lt 1 ] && left=1
timeout $left tail --pid=$export_pid -f /dev/null
if kill -0 $export_pid 2>/dev/null; then echo "l8 export still running at $SECONDS s"; else wait $export_pid; echo "l8 export exit $? ($SECONDS s)"; fi
tail -3 $OUT/l8-export.log; ls -la /tmp/l8 2>/dev/null | head -5
echo "== end ($SECONDS s)"
