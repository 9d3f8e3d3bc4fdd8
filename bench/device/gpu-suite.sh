#!/usr/bin/env bash
# The whole GPU suite (test/gpu/run-all.sh) on the relocatable bundle, alone: for a session
# with one suite's worth of device time. Log under $OUT/gpu_suite.log.
#   gpu-suite.sh [NAME...]   with names, only those (run-all.sh's model names, `quant`, `kv-fp8`)
# carry: .bundle/infer-bundle.tar.xz
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b
B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
timeout ${SUITE_SECONDS:-560} bash test/gpu/run-all.sh $B/bin test/models "" "$@" > $OUT/gpu_suite.log 2>&1
echo "suite exit $? ($SECONDS s)"; grep -E "^FAIL|gpu tests:" $OUT/gpu_suite.log | head -40
