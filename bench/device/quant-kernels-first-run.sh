#!/usr/bin/env bash
# Issue 48's opt-in kernels on their first GPU run, in the order of what each decides:
# the nvcc kernel tests of .bundle/kernels.tar.xz (kv_fp8_test, quantized_fp8_gemv_test,
# quantized_gemm_test: checks against double references, then timings with weights streamed
# from HBM); Nsight Compute on the int4 and fp8 tensor-core decode GEMVs (one launch each at
# Llama-3-8B's shapes); `run-all.sh ... kv-fp8 quant` (every FP8 KV and quantized check against
# ONNX Runtime, the flags of the new kernels among them); then llama3-8b's shapes with 8 of 32
# layers (random bf16 weights, exported here) at batch 1: fp8 with and without its decode on the
# FP8 tensor cores (--no-fp8-mma-gemv), int4 g128, bf16; last, if the clock allows, the FP8 KV
# cache with its prefill kernel on 64 requests of 2,048 / 128 beside bf16's (its compile's wall
# time and peak RSS). Session 69 ran it when both kernels were opt-in (--fp8-mma-gemv,
# --fp8-cache-prefill-kernel); the flags below are today's equivalents.
# carry: .bundle. Logs, bench.jsonl and summary.txt under $OUT as all.tgz.
set -uo pipefail
LIMIT=${LIMIT:-585}; . bench/device/lib.sh
log "$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
log "commit $(git log -1 --format=%h 2>/dev/null)"
left() { [ $(( LIMIT - SECONDS )) -gt $1 ]; }
python3 -c "import json; c=json.load(open('bench/presets/llama3-8b.json')); c['num_hidden_layers']=8; json.dump(c, open('/tmp/l8-short.json','w'))"
if ! grep -qx "exit 0" /tmp/l8-short-export.log 2>/dev/null; then
  (PYTHONPATH=python nice -n 19 python3 -m infer.export /tmp/l8-short.json -o /tmp/l8-short \
    --random-weights --dtype bf16 > /tmp/l8-short-export.log 2>&1; echo "exit $?" >> /tmp/l8-short-export.log) > /dev/null 2>&1 &
  short_export=$!
fi
mkdir -p /tmp/k && tar xJf .bundle/kernels.tar.xz -C /tmp/k
for n in kv_fp8_test quantized_fp8_gemv_test quantized_gemm_test; do
  timeout 120 /tmp/k/$n > $OUT/$n.log 2>&1
  log "$n exit $? ($SECONDS s): $(grep -c '^PASS\| ok$' $OUT/$n.log) passed, $(grep -c 'FAIL' $OUT/$n.log) failed; $(tail -1 $OUT/$n.log)"
  grep -E 'FAIL|^timing' $OUT/$n.log | head -24 | sed "s/^/$n /" | tee -a $sum
done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
ncu_profile() { # NAME KERNEL_REGEX TEST N K T
  local name=$1 regex=$2 test=$3; shift 3
  timeout 90 $NCU --clock-control none -k "regex:$regex" --launch-skip 20 --launch-count 1 \
    --set full /tmp/k/$test --time "$@" > $OUT/ncu-$name.txt 2>&1
  log "ncu $name exit $? ($SECONDS s): $(grep -E 'DRAM Throughput|^ +Duration|Achieved Occupancy|Registers Per Thread|Theoretical Occupancy' $OUT/ncu-$name.txt | tr -s ' ' | tr '\n' ';')"
}
[ -n "$NCU" ] && ncu_profile int4-28672x4096 infer_quantized_gemv_mma quantized_gemm_test 28672 4096 1
[ -n "$NCU" ] && ncu_profile fp8-14336x4096 infer_quantized_gemv_fp8_mma quantized_fp8_gemv_test 14336 4096 1
timeout 260 bash test/gpu/run-all.sh $B/bin test/models "" kv-fp8 quant > $OUT/gpu-kvfp8-quant.log 2>&1
log "run-all.sh kv-fp8 quant exit $? ($SECONDS s): $(grep -E 'gpu tests:' $OUT/gpu-kvfp8-quant.log)"
grep -E '^FAIL' $OUT/gpu-kvfp8-quant.log | head -20 | tee -a $sum
[ -n "${short_export:-}" ] && wait $short_export
log "export: $(tail -1 /tmp/l8-short-export.log) ($SECONDS s)"
BS1=(--requests 10 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2)
LONG=(--requests 64 --input-len 2048 --output-len 128 --max-sequences 64 --warmup-requests 8)
variant() { # NAME BENCHES(bs1,long) COMPILE_FLAGS...
  local name=l8s-$1 runs=$2; shift 2
  timeout $(( LIMIT - SECONDS )) /usr/bin/time -f "%e s wall, %M KiB peak" $B/bin/infer-compile \
    /tmp/l8-short/model.onnx --dtype bf16 "$@" -o /tmp/$name.infer > $OUT/$name-compile.log 2>&1 \
    || { log "$name compile failed ($SECONDS s): $(tail -2 $OUT/$name-compile.log | tr '\n' ' ')"; return; }
  log "$name compile: $(tail -1 $OUT/$name-compile.log) ($SECONDS s)"
  [[ $runs == *bs1* ]] && left 30 && bench $name-bs1 /tmp/$name.infer "${BS1[@]}"
  [[ $runs == *long* ]] && left 60 && bench $name-long-64x2048 /tmp/$name.infer "${LONG[@]}"
  rm -f /tmp/$name.infer
}
left 60 && variant fp8mma bs1 --quantize fp8
left 60 && variant fp8 bs1 --quantize fp8 --no-fp8-mma-gemv
left 60 && variant int4 bs1 --quantize int4 --group-size 128
left 80 && variant bf16 bs1,long
left 200 && variant kvfp8pre long,bs1 --kv-cache-dtype fp8
log "done ($SECONDS s)"
pack
