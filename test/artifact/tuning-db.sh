#!/usr/bin/env bash
# `infer-compile --tuning-db FILE` without --tune (no GPU needed) copies the
# file's GEMM tuning records for the program's shapes into the artifact, for
# every GPU the file holds; `infer-run info` lists them with the report of
# tuned against heuristic times. The shapes come from `info` of an untuned
# artifact, the records and the expected report figures from Python here.
# Also: the file is left as it was, records of shapes the program lacks are
# not copied, a file that is not a database and --tune where it cannot run
# are clear errors, and the cpu backend's tokens do not change.
# usage: tuning-db.sh INFER_COMPILE INFER_RUN MODEL.onnx WORKDIR
set -eu
compile=$1 run=$2 model=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$compile" "$model" -o "$work/plain.infer" --dtype bf16 --max-batch-tokens 64 >/dev/null 2>&1
"$run" "$work/plain.infer" info >"$work/plain.txt"
grep -q "^tuning: none" "$work/plain.txt" || fail "an untuned artifact's info has no 'tuning: none'"

# A database with records for every listed shape at T = 1..64 on two GPUs,
# and one for a shape this program does not have.
python3 - "$work/plain.txt" "$work/db.json" "$work/expected.txt" <<'PY'
import json, re, sys
info, db, expected = sys.argv[1:]
uses = re.findall(r"^  gemm (\w+) k(\d+) n(\d+) (kn|nk) bias(\d) residual(\d) \((\d+) launches\)$",
                  open(info).read(), re.M)
assert len(uses) >= 3, uses
def record(use, tokens, gpu):
    type_, k, n, layout, bias, residual, _ = use
    return {"type": type_, "k": int(k), "n": int(n), "tokens": tokens,
            "transposed": layout == "nk", "bias": bias == "1", "residual": residual == "1",
            "algorithm": f"{gpu:02x}" * 64, "tuned_us": 1.0 + tokens / 64,
            "heuristic_us": 2.0 + tokens / 16, "candidates": 8}
sets = []
for gpu, device in enumerate(["NVIDIA H200, 132 SMs", "NVIDIA H100 80GB HBM3, 132 SMs"]):
    gemm = [record(u, t, gpu) for u in uses for t in (1, 2, 4, 8, 16, 32, 64)]
    sets.append({"device": device, "cublaslt_version": 130200, "gemm": gemm})
foreign = record(("bf16", "4096", "4096", "nk", "0", "0", "1"), 1, 0)
sets[0]["gemm"].append(foreign)
json.dump({"format": 2, "record_sets": sets}, open(db, "w"))
# The report's step rows: per T, the launches of each shape times its times.
with open(expected, "w") as out:
    for t in (1, 8, 64):
        heuristic = sum(int(u[6]) * (2.0 + t / 16) for u in uses)
        tuned = sum(int(u[6]) * (1.0 + t / 64) for u in uses)
        out.write(f"{t} {heuristic:.1f} {tuned:.1f} {100 * (1 - tuned / heuristic):.1f}%\n")
    out.write(f"{7 * len(uses)}\n")
PY
cp "$work/db.json" "$work/db.before"
"$compile" "$model" -o "$work/tuned.infer" --dtype bf16 --max-batch-tokens 64 \
  --tuning-db "$work/db.json" >/dev/null 2>"$work/compile.err" || { cat "$work/compile.err"; fail "compile with --tuning-db"; }
cmp -s "$work/db.json" "$work/db.before" || fail "a compile without --tune changed the database"
"$run" "$work/tuned.infer" info >"$work/tuned.txt"
records=$(tail -1 "$work/expected.txt")
for device in "NVIDIA H200, 132 SMs" "NVIDIA H100 80GB HBM3, 132 SMs"; do
  grep -q "^tuning: GEMM tuning records for $device (cuBLASLt 130200): $records$" "$work/tuned.txt" ||
    fail "info lists no $records records for $device"
done
grep -q "k4096 n4096" "$work/tuned.txt" && fail "a record of a shape the program lacks was copied"
head -3 "$work/expected.txt" | while read -r t heuristic tuned saved; do
  grep -Eq "^ +$t +$heuristic +$tuned +$saved$" "$work/tuned.txt" ||
    fail "the report's step of $t tokens is not '$heuristic $tuned $saved'"
done

# The cpu backend runs the tuned artifact as the untuned one.
a=$("$run" "$work/plain.infer" generate --device cpu --prompt-ids 1,2,3 --max-new-tokens 5 --greedy)
b=$("$run" "$work/tuned.infer" generate --device cpu --prompt-ids 1,2,3 --max-new-tokens 5 --greedy)
[ "$a" = "$b" ] || fail "tuning records changed the cpu backend's tokens: '$a' vs '$b'"

# Errors: not a database (and left alone), --target cpu, --tune without a GPU.
echo '{"format": 2, "record_sets": [{"device": "x"}]}' >"$work/bad.json"
if "$compile" "$model" -o "$work/x.infer" --tuning-db "$work/bad.json" 2>"$work/bad.err"; then
  fail "a malformed database was accepted"
fi
grep -q "tuning database $work/bad.json: " "$work/bad.err" || fail "no clear error: $(cat "$work/bad.err")"
grep -q '"device": "x"' "$work/bad.json" || fail "the malformed database was overwritten"
set +e
"$compile" "$model" -o "$work/x.infer" --target cpu --tune 2>"$work/cpu.err"; code=$?
set -e
[ $code -eq 2 ] && grep -q "target cpu" "$work/cpu.err" || fail "--tune --target cpu: exit $code, $(cat "$work/cpu.err")"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >/dev/null 2>&1; then
  if "$compile" "$model" -o "$work/x.infer" --tune 2>"$work/tune.err"; then
    fail "--tune succeeded without a GPU"
  fi
  grep -q "tune times GEMMs on this machine's GPU" "$work/tune.err" || fail "--tune without a GPU: $(cat "$work/tune.err")"
  [ ! -e "$work/x.infer" ] || fail "--tune without a GPU left an artifact"
fi
echo "tuning-db: ok"
