#!/usr/bin/env bash
# Issue 48's decode GEMVs under Nsight Compute: where infer_quantized_gemv_mma (int4 g128) and
# infer_quantized_gemv_fp8_mma spend a launch at Llama-3-8B's shapes, one token (the kernel
# tests' --time mode: one shape, weights cycled past the L2). ncu with --clock-control none
# (METHOD.md: clocks stay as they are), the full set of sections on the 20th launch.
# carry: .bundle (kernels.tar.xz). Reports as text under $OUT.
set -uo pipefail
LIMIT=${LIMIT:-585}; . bench/device/lib.sh
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
log "ncu: ${NCU:-none}"
mkdir -p /tmp/k && tar xJf .bundle/kernels.tar.xz -C /tmp/k
profile() { # NAME KERNEL_REGEX TEST N K T
  local name=$1 regex=$2 test=$3; shift 3
  timeout 150 $NCU --clock-control none -k "regex:$regex" --launch-skip 20 --launch-count 1 \
    --set full /tmp/k/$test --time "$@" > $OUT/ncu-$name.txt 2>&1
  log "$name exit $?: $(grep -E 'DRAM Throughput|Memory Throughput|^ +Duration|Achieved Occupancy|Registers Per' $OUT/ncu-$name.txt | tr -s ' ' | tr '\n' ';')"
}
for shape in "28672 4096" "4096 4096" "4096 14336"; do
  set -- $shape
  profile int4-$1x$2 "infer_quantized_gemv_mma" quantized_gemm_test $1 $2 1
  profile fp8-$1x$2 "infer_quantized_gemv_fp8_mma" quantized_fp8_gemv_test $1 $2 1
done
pack
