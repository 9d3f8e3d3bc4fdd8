#!/usr/bin/env bash
# Issue 48's tensor-core decode GEMVs, variants side by side on one GPU (the kernel tests built
# per variant into .bundle/variants.tar.xz as quantized_gemm_test_vN / quantized_fp8_gemv_test_vN):
# each test's --time mode at Llama-3-8B's shapes, one token, weights streamed from HBM, in
# rounds so that drift shows; the checks of the variants that are candidates (--no-timings).
# carry: .bundle. Logs under $OUT as all.tgz.
set -uo pipefail
LIMIT=${LIMIT:-400}; . bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
mkdir -p /tmp/var && tar xJf .bundle/variants.tar.xz -C /tmp/var
VARIANTS=${VARIANTS:-v0 v1 v2 v3}
for round in $(seq ${ROUNDS:-2}); do
  for v in $VARIANTS; do
    for shape in "28672 4096" "4096 4096" "4096 14336" "6144 4096"; do
      timeout 30 /tmp/var/quantized_gemm_test_$v --time $shape 1 2>&1 | sed "s/^/r$round $v /" | tee -a $sum
      timeout 30 /tmp/var/quantized_fp8_gemv_test_$v --time $shape 1 2>&1 | sed "s/^/r$round $v /" | tee -a $sum
    done
  done
done
for v in ${CHECK:-v2 v3}; do
  for t in quantized_gemm_test quantized_fp8_gemv_test; do
    timeout 90 /tmp/var/${t}_$v --no-timings > $OUT/${t}_$v.log 2>&1
    log "$t $v exit $?: $(tail -1 $OUT/${t}_$v.log)"
  done
done
pack
