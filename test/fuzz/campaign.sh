#!/usr/bin/env bash
# campaign.sh BIN_DIR OUT_DIR JOBS TARGET:SECONDS...
# A long fuzz campaign (docs/fuzzing.md): each TARGET from BIN_DIR runs for
# SECONDS in libFuzzer's fork mode with JOBS processes from its committed corpus,
# going on past crashes, timeouts and OOMs, which are kept in OUT_DIR/TARGET/.
# OUT_DIR/TARGET.log ends with the totals: executions (the number after '#'),
# edges covered ('cov:') and the crash/timeout/OOM counts; OUT_DIR/TARGET.reports
# the top frames of each sanitizer report.
set -uo pipefail
bin="$(realpath "$1")"; out="$(realpath -m "$2")"; jobs="$3"; shift 3
root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$out"
for spec in "$@"; do
  target="${spec%%:*}"; seconds="${spec##*:}"
  work="$(mktemp -d "${TMPDIR:-/tmp}/infer-campaign.XXXXXX")"
  mkdir -p "$out/$target" "$work/new" "$work/tmp"
  echo "campaign: $target for ${seconds}s, $jobs jobs"
  (cd "$work/tmp" && TMPDIR="$work/tmp" \
    ASAN_OPTIONS="detect_leaks=1:allow_user_poisoning=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$bin/$target" "$work/new" "$root/test/fuzz/corpus/$target" -fork="$jobs" \
      -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -artifact_prefix="$out/$target/" > "$work/log" 2>&1)
  grep -E '^#[0-9]+: cov:' "$work/log" | tail -n 1 > "$out/$target.log"
  grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written' "$work/log" | sort | uniq -c \
    >> "$out/$target.log"
  # Each report's first frames, to tell one bug from several.
  grep -A 14 -E '^==[0-9]+==ERROR: ' "$work/log" | grep -E '^==|^    #([0-9]|1[0-2]) ' \
    > "$out/$target.reports" || true
  cat "$out/$target.log"
  rm -rf "$work"
done
