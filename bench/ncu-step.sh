#!/usr/bin/env bash
# Per-kernel table of one batch-1 decode step under Nsight Compute (the GPU
# machine's ncu works with --clock-control none): runs `infer-run bench` for
# one request of 128 input and 4 output tokens without CUDA graphs (so every
# kernel is its own launch) and with cuBLASLt's first heuristic (no tuning
# launches), records each kernel's time and DRAM bytes read, and prints the
# last step's table (bench/ncu_step_table.py). Switches such as
# INFER_PDL=1 pass through the environment.
#
#   bench/ncu-step.sh BIN_DIR ARTIFACT OUT_DIR
#
# Writes OUT_DIR/ncu.csv, OUT_DIR/ncu-run.log and OUT_DIR/ncu-table.md.
set -euo pipefail
bin=$1; artifact=$2; out=$3
mkdir -p "$out"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
[ -n "$ncu" ] || { echo "ncu-step: no ncu on PATH or in /usr/local/cuda/bin" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
INFER_CUDA_GRAPHS=0 "$ncu" --clock-control none --cache-control none \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv --page raw \
  --log-file "$out/ncu.csv" \
  "$bin/infer-run" "$artifact" bench --device cuda --requests 1 --input-len 128 --output-len 4 \
  --batch 1 --warmup-requests 0 > "$out/ncu-run.log" 2>&1
python3 "$here/ncu_step_table.py" "$out/ncu.csv" | tee "$out/ncu-table.md"
