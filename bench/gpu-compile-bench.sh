#!/usr/bin/env bash
# Compile-time benchmark of the bundled infer-compile on the GPU machine
# (bench/results/tinyllama-1.1b-compile.md, docs/bundle.md).
#
#   bench/gpu-compile-bench.sh BUNDLE.tar.xz RESULTS_DIR [PRESET]
#
# Unpacks the bundle (tools/make-bundle.sh) into /tmp/infer-bundle-run, exports
# PRESET (default tinyllama-1.1b) in bf16 with .devtools/export_hf.py, then
# times `infer-compile --emit=optimized` and `infer-compile -o` with
# /usr/bin/time -v and prints the artifact's summary with `infer-run info`.
# Writes 7 files into RESULTS_DIR: summary.txt (the numbers and infer-run info),
# env.txt (machine, bundle, ldd, --help), export.log, time-emit.txt,
# time-artifact.txt, tools.log (infer-compile's stderr) and opt-ir.mlir (the
# optimized IR without its dialect_resources blob, which is the weights in hex).
set -uo pipefail
tarball=$1; res=$2; preset=${3:-tinyllama-1.1b}
mkdir -p "$res"
work=/tmp/infer-bundle-run; rm -rf "$work"; mkdir -p "$work"
tar -C "$work" -xJf "$tarball" || exit 1
B=$work/infer-bundle
sum=$res/summary.txt; : > "$sum"
log() { echo "$*" | tee -a "$sum"; }
timed() { # timed OUTFILE CMD...: /usr/bin/time -v if present, else Python's getrusage
  local o=$1; shift
  if [ -x /usr/bin/time ]; then /usr/bin/time -v -o "$o" "$@"; else
    python3 -c 'import resource,subprocess,sys,time
t=time.time(); r=subprocess.call(sys.argv[2:]); w=time.time()-t
u=resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1],"w").write("Elapsed (wall clock) time (seconds): %.2f\nUser time (seconds): %.2f\nSystem time (seconds): %.2f\nMaximum resident set size (kbytes): %d\nExit status: %d\n"%(w,u.ru_utime,u.ru_stime,u.ru_maxrss,r)); sys.exit(r)' "$o" "$@"
  fi
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
field() { grep -m1 "$1" "$2" | sed 's/.*: //'; }

{ grep PRETTY_NAME /etc/os-release; nproc; free -g | head -2; ldd --version | head -1
  ls -la "$B/bin" "$B/lib"; ldd "$B"/bin/*; cat "$B/BUNDLE.txt"
  "$B/bin/infer-compile" --version; "$B/bin/infer-compile" --help; "$B/bin/infer-run" --help
  "$B/bin/infer-opt" --version; } > "$res/env.txt" 2>&1
log "bundle: $(du -b "$tarball" | cut -f1) bytes; $("$B/bin/infer-compile" --version)"

model=${INFER_BENCH_MODEL:-/tmp/big/$preset.onnx}  # set: skip the export
if [ -z "${INFER_BENCH_MODEL:-}" ]; then
t0=$(date +%s.%N)
PYTHONUNBUFFERED=1 python3 .devtools/export_hf.py --preset "$preset" --dtype bfloat16 \
  --goldens 0 --out /tmp/big > "$res/export.log" 2>&1 || { log "export failed"; tail -20 "$res/export.log"; exit 1; }
log "export: $(elapsed "$t0") s; $(du -cb /tmp/big/"$preset".onnx* | tail -1 | cut -f1) bytes of ONNX"
fi

timed "$res/time-emit.txt" "$B/bin/infer-compile" "$model" --emit=optimized > /tmp/opt.mlir 2> "$res/tools.log"
log "--emit=optimized: exit $(field 'Exit status' "$res/time-emit.txt"), wall $(field 'Elapsed (wall' "$res/time-emit.txt"), user $(field 'User time' "$res/time-emit.txt") s, sys $(field 'System time' "$res/time-emit.txt") s, peak RSS $(field 'Maximum resident' "$res/time-emit.txt") KiB; IR $(stat -c %s /tmp/opt.mlir) bytes"
sed '/^{-#/q' /tmp/opt.mlir > "$res/opt-ir.mlir"
log "ops in the optimized IR:"
grep -o '= graph\.[a-z_]*' /tmp/opt.mlir | sort | uniq -c | sort -rn | tee -a "$sum"
log "  func ops total (graph.*): $(grep -c '= graph\.' /tmp/opt.mlir)"
rm -f /tmp/opt.mlir

timed "$res/time-artifact.txt" "$B/bin/infer-compile" "$model" -o /tmp/tl.infer >> "$res/tools.log" 2>&1
log "-o artifact: exit $(field 'Exit status' "$res/time-artifact.txt"), wall $(field 'Elapsed (wall' "$res/time-artifact.txt"), user $(field 'User time' "$res/time-artifact.txt") s, peak RSS $(field 'Maximum resident' "$res/time-artifact.txt") KiB; artifact $(stat -c %s /tmp/tl.infer) bytes"
tail -3 "$res/tools.log" >> "$sum"
t0=$(date +%s.%N)
"$B/bin/infer-run" /tmp/tl.infer info > /tmp/info.txt 2>&1
log "infer-run info: exit $?, $(elapsed "$t0") s"
cat /tmp/info.txt >> "$sum"
