#!/usr/bin/env bash
# The throughput-latency curve of a compiled model, through HTTP and in-process (issue 45):
# for each request rate, Poisson arrivals of random-id prompts of --input-len tokens that
# generate exactly --output-len tokens each, through `infer-run serve` driven by
# bench/serve_load.py, then through `infer-run bench --rate` (the same engine without HTTP),
# with the same --max-sequences. One JSON line a point in RESULTS_DIR/curve.jsonl, one log each.
#
#   bench/serve-curve.sh BIN_DIR ARTIFACT RESULTS_DIR VOCAB [options] RATE...
#
# RATE is requests a second or `inf` (all at once: saturation). A point sends
# max(32, RATE x --seconds) requests; inf sends --saturation-requests.
# Options: --seconds S (default 12), --input-len N (128), --output-len N (128),
# --max-sequences N (256), --saturation-requests N (1000), --processes P (client processes, 4),
# --device D (cuda). bench/plot_serve_curve.py draws the curves.
set -uo pipefail
bin=$1; artifact=$2; res=$3; vocab=$4; shift 4
seconds=12; in=128; out=128; seqs=256; sat=1000; procs=4; device=cuda; rates=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2;; --input-len) in=$2; shift 2;; --output-len) out=$2; shift 2;;
    --max-sequences) seqs=$2; shift 2;; --saturation-requests) sat=$2; shift 2;;
    --processes) procs=$2; shift 2;; --device) device=$2; shift 2;;
    -*) echo "serve-curve: unknown option $1" >&2; exit 2;;
    *) rates+=("$1"); shift;;
  esac
done
[ ${#rates[@]} -gt 0 ] || { echo "serve-curve: no RATE given" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$res"; jsonl=$res/curve.jsonl; : > "$jsonl"
requests_for() { # RATE -> requests at that point
  if [ "$1" = inf ]; then echo "$sat"; else
    awk -v r="$1" -v s="$seconds" 'BEGIN { n = int(r * s + 0.5); print (n < 32 ? 32 : n) }'; fi
}
tag() { # MODE RATE REQUESTS: the fields every line of this run starts with
  printf '{"artifact": "%s", "mode": "%s", "rate": "%s", "requests": %s, "input_len": %s, "output_len": %s, "max_sequences": %s}' \
    "$(basename "$artifact")" "$1" "$2" "$3" "$in" "$out" "$seqs"
}
merge() { # TAG RESULT: one line, the tag's fields first and winning
  python3 -c 'import json,sys; t=json.loads(sys.argv[1]); print(json.dumps({**t, **json.loads(sys.argv[2] or "{}"), **t}))' "$@"; }

# Through HTTP: one server for every rate, warmed up by an untimed saturation run.
"$bin/infer-run" "$artifact" serve --device "$device" --port 0 --max-sequences "$seqs" \
  --max-queue "$sat" > "$res/serve.stdout" 2> "$res/serve.log" &
server=$!
for _ in $(seq 600); do
  port=$(sed -n 's/.*listening on http:\/\/[0-9.]*:\([0-9]*\).*/\1/p' "$res/serve.stdout" | head -1)
  [ -n "$port" ] && break; kill -0 $server 2>/dev/null || break; sleep 0.2
done
if [ -z "${port:-}" ]; then echo "serve-curve: the server did not start"; cat "$res/serve.log"; exit 1; fi
# The load generator is not the system measured: it runs at a lower CPU priority, so its Python
# processes (one core each at saturation) do not take the server's cores (clients are remote in
# production; vLLM's engine has its own process for the same reason).
load() { # RATE REQUESTS LOG
  nice -n 10 python3 "$here/serve_load.py" --base-url "http://127.0.0.1:$port" --num-prompts "$2" \
    --request-rate "$1" --input-len "$in" --output-len "$out" --vocab "$vocab" \
    --processes "$procs" > "$3" 2>&1
}
load inf $((sat < 256 ? sat : 256)) "$res/http-warmup.log" || { echo "serve-curve: warm-up failed"; tail -5 "$res/http-warmup.log"; }
for rate in "${rates[@]}"; do
  n=$(requests_for "$rate")
  load "$rate" "$n" "$res/http-$rate.log" || echo "serve-curve: http $rate failed"
  merge "$(tag http "$rate" "$n")" "$(tail -1 "$res/http-$rate.log")" >> "$jsonl"
  echo "http   rate $rate: $(grep -m1 'output tok/s' "$res/http-$rate.log")"
  # Cumulative: the step-time histogram of a rate is the difference from the one before.
  curl -s "http://127.0.0.1:$port/metrics" > "$res/metrics-after-$rate.txt"
done
kill -TERM $server; wait $server; echo "serve exited $?"

# In-process: the same engine flags; each point (a fresh process) warms up with --max-sequences
# requests of the same shapes, as the server did before its first point (GEMM tuning and CUDA
# graphs at the full batch happen before the clock starts in both).
for rate in "${rates[@]}"; do
  n=$(requests_for "$rate")
  flags=(--rate "$rate"); [ "$rate" = inf ] && flags=()
  "$bin/infer-run" "$artifact" bench --device "$device" --requests "$n" --input-len "$in" \
    --output-len "$out" --max-sequences "$seqs" --warmup-requests "$seqs" "${flags[@]}" \
    > "$res/inproc-$rate.log" 2>&1 || echo "serve-curve: in-process $rate failed"
  merge "$(tag inproc "$rate" "$n")" "$(tail -1 "$res/inproc-$rate.log")" >> "$jsonl"
  echo "inproc rate $rate: $(grep -m1 'output tok/s' "$res/inproc-$rate.log")"
done
