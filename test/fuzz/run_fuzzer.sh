#!/usr/bin/env bash
# run_fuzzer.sh FUZZER CORPUS SECONDS [libFuzzer flags...]
# Runs FUZZER for SECONDS from the committed CORPUS (read only: new inputs go
# to a temporary directory), with the limits every run uses: 10 s an input,
# 2 GB of memory, and a fixed seed (the same mutations every run: what CI finds
# again here, a campaign, campaign.sh, explores further). It first runs every
# corpus input, so an input that once crashed fails here again. Exits non-zero on any crash, leak, timeout or
# sanitizer report; the crashing input is left in $INFER_FUZZ_ARTIFACTS
# (default: the temporary directory, whose path is printed).
set -euo pipefail
fuzzer="$(realpath "$1")"; corpus="$(realpath "$2")"; seconds="$3"; shift 3
work="$(mktemp -d "${TMPDIR:-/tmp}/infer-fuzz.XXXXXX")"
artifacts="${INFER_FUZZ_ARTIFACTS:-$work/crashes}"
mkdir -p "$work/new" "$work/tmp" "$artifacts"
# The fuzzer writes its own temporary files (artifact, .npy) and resolves
# model-relative paths in an empty directory of its own.
cd "$work/tmp"
set +e
# allow_user_poisoning=0: LLVM's allocators poison memory from header code that
# is instrumented here but not in Debian's libMLIR, which ASan then misreads.
TMPDIR="$work/tmp" ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$fuzzer" "$work/new" "$corpus" -max_total_time="$seconds" -timeout=10 -seed=1 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$@" > "$work/log" 2>&1
status=$?
set -e
# The progress lines are noise here; the report and the final stats are not.
grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD)|NEW_FUNC|^"|^INFO: ' "$work/log" | tail -n 200
# libFuzzer also saves inputs that ran longer than 10 s without reaching the
# timeout (slow-unit-*): under ASan on a loaded 2-core machine a large mutated
# model's proofs can take that long (0.4 s in a plain build). They are listed,
# not failed on; crashes, leaks, timeouts and out-of-memory inputs fail.
if ls "$artifacts"/slow-unit-* >/dev/null 2>&1; then
  echo "run_fuzzer: slow inputs (not failures) in $artifacts:"; ls -l "$artifacts"/slow-unit-*
fi
if ls "$artifacts"/* 2>/dev/null | grep -qv '/slow-unit-'; then
  echo "run_fuzzer: crashing inputs in $artifacts:"; ls -l "$artifacts"
  exit 1
fi
rm -rf "$work"
exit "$status"
