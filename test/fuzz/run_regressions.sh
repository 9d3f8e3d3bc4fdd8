#!/usr/bin/env bash
# Runs infer-compile --check on every saved fuzzer input: each must end with a
# clean diagnostic (exit 0 or 1), never a signal or another status.
set -u
compiler="$1"; dir="$2"
passed=0; failed=0
for input in "$dir"/*.onnx; do
  [ -e "$input" ] || continue
  "$compiler" "$input" --check >/dev/null 2>&1
  rc=$?
  if [ "$rc" -le 1 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); echo "FAIL: $input exited $rc"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
