#!/usr/bin/env bash
# Issue 46's real-shape benchmarks from the exports suite-and-family-exports.sh left in /tmp/g2 and
# /tmp/q3 (same warm machine): each compiled (bf16), then `infer-run bench` at batch 1 (128 in /
# 128 out), offline (256 requests of 128 / 128 at once) and, for gemma2-2b's sliding window, batch 1
# at 6,144 prompt tokens (past the 4,096-token window). Logs and bench.jsonl under $OUT.
#   real-shape-families.sh [gemma2-2b] [qwen3-30b-a3b-8l]   (default both)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
B=/tmp/b/infer-bundle
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
run_model() { # NAME DIR DEADLINE [COMPILE FLAGS...]
  local name=$1 dir=$2 deadline=$3; shift 3
  [ -f "$dir/model.onnx" ] || { echo "$name: no export in $dir (fresh machine?)"; return; }
  /usr/bin/time -v -o "$OUT/$name-compile-time.txt" timeout $(( deadline - SECONDS )) \
    $B/bin/infer-compile "$dir/model.onnx" -o /tmp/$name.infer --dtype bf16 "$@" > "$OUT/$name-compile.log" 2>&1
  echo "$name compile exit $? ($SECONDS s): $(grep -E 'Elapsed' "$OUT/$name-compile-time.txt" | sed 's/.*: //')," \
    "peak RSS $(grep 'Maximum res' "$OUT/$name-compile-time.txt" | sed 's/.*: //') KiB"
  tail -3 "$OUT/$name-compile.log"
  [ -f /tmp/$name.infer ] || return
  $B/bin/infer-run /tmp/$name.infer info > "$OUT/$name-info.log" 2>&1
  bench() { # TAG ARGS...
    local tag=$1; shift
    [ $(( deadline - SECONDS )) -lt 20 ] && { echo "$name $tag: skipped (time)"; return; }
    timeout $(( deadline - SECONDS )) $B/bin/infer-run /tmp/$name.infer bench --device cuda "$@" \
      > "$OUT/$name-$tag.log" 2>&1
    echo "$name $tag exit $? ($SECONDS s): $*"; grep -v '^{' "$OUT/$name-$tag.log" | tail -6
    tail -1 "$OUT/$name-$tag.log" | grep '^{' >> "$OUT/bench.jsonl"
  }
  bench bs1 --requests 6 --input-len 128 --output-len 128 --batch 1 --warmup-requests 2
  bench offline --requests 256 --input-len 128 --output-len 128 --max-sequences 256 --warmup-requests 256
  [ $name = gemma2-2b ] && bench bs1-long --requests 2 --input-len 6144 --output-len 128 --batch 1 \
    --warmup-requests 1
}
models=${*:-gemma2-2b qwen3-30b-a3b-8l}
case " $models " in *" gemma2-2b "*) run_model gemma2-2b /tmp/g2 290 --max-seq-len 8192 ;; esac
case " $models " in *" qwen3-30b-a3b-8l "*) run_model qwen3-30b-a3b-8l /tmp/q3 585 ;; esac
tar czf $OUT/results.tar.gz -C $OUT --exclude results.tar.gz . 2>/dev/null
echo "== end ($SECONDS s)"
