#!/usr/bin/env bash
# The batch-1 decode step's kernel timeline as it runs (CUDA graphs,
# programmatic launch): `infer-run bench` for 3 requests of 128 input and 64
# output tokens under the CUPTI injection library bench/kernel_trace (built
# here with g++ and the CUDA toolkit's CUPTI unless LIB_DIR holds a built
# libinfer-kernel-trace.so beside libcupti), then bench/kernel_trace_table.py.
# Switches such as INFER_PDL=0 pass through the environment.
#
#   bench/kernel-trace.sh BIN_DIR ARTIFACT OUT_DIR [LIB_DIR]
#
# Writes OUT_DIR/kernel-trace.csv, OUT_DIR/kernel-trace-run.log and
# OUT_DIR/kernel-trace.md.
set -euo pipefail
bin=$1; artifact=$2; out=$3; lib=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
if [ -z "$lib" ]; then
  lib=$out/lib; mkdir -p "$lib"
  cuda=${CUDA_HOME:-/usr/local/cuda}
  g++ -std=c++17 -O2 -shared -fPIC -I"$cuda/include" "$here/kernel_trace/KernelTrace.cpp" \
    -o "$lib/libinfer-kernel-trace.so" -L"$cuda/lib64" -lcupti -Wl,-rpath,"$cuda/lib64"
fi
CUDA_INJECTION64_PATH=$lib/libinfer-kernel-trace.so INFER_KERNEL_TRACE=$out/kernel-trace.csv \
  "$bin/infer-run" "$artifact" bench --device cuda --requests 3 --input-len 128 --output-len 64 \
  --batch 1 --warmup-requests 1 > "$out/kernel-trace-run.log" 2>&1
python3 "$here/kernel_trace_table.py" "$out/kernel-trace.csv" | tee "$out/kernel-trace.md"
