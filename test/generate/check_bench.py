#!/usr/bin/env python3
"""Bench check: compiles MODEL.onnx (--target cpu) and runs `infer-run bench --device cpu`:

  offline   --requests 8 --input-len 16 --output-len 8 exits 0; its JSON line parses; 64 output
            tokens, output tok/s > 0, TTFT p50 <= p99, TPOT p50 <= p99, peak KV blocks within
            the pool (and at least what 8 requests of 24 tokens need at once)
  latency   --batch 1: one request at a time, so the peak is one request's blocks
  errors    0 requests, input-len + output-len beyond the context, no --output-len

  check_bench.py --infer-compile C --infer-run R --model M.onnx
"""
import argparse, json, os, subprocess, sys, tempfile

BLOCK = 4
MAX_SEQ_LEN = 64


def run(cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    a = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "model.infer")
        proc = run([a.infer_compile, a.model, "-o", artifact, "--target", "cpu",
                    "--kv-block-size", BLOCK, "--max-seq-len", MAX_SEQ_LEN])
        if proc.returncode != 0:
            raise SystemExit(f"FAIL: compile\n{proc.stderr}")
        bench = [a.infer_run, artifact, "bench", "--device", "cpu"]

        def measure(name, extra, need_blocks):
            proc = run(bench + ["--requests", 8, "--input-len", 16, "--output-len", 8] + extra)
            if proc.returncode != 0:
                failures.append(f"{name}: exit {proc.returncode}: {proc.stderr.strip()}")
                return
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            checks = [
                (r["requests"] == 8 and r["output_tokens"] == 64 and r["input_tokens"] == 128,
                 "8 requests, 64 output and 128 input tokens"),
                (r["output_tok_s"] > 0 and r["input_tok_s"] > 0 and r["wall_s"] > 0, "rates > 0"),
                (0 < r["ttft_ms_p50"] <= r["ttft_ms_p99"], "0 < TTFT p50 <= p99"),
                (0 < r["tpot_ms_p50"] <= r["tpot_ms_p99"], "0 < TPOT p50 <= p99"),
                (need_blocks <= r["peak_kv_blocks"] <= r["kv_blocks"] - 1,
                 f"{need_blocks} <= peak KV blocks <= pool"),
                (r["computed_tokens"] == 8 * (16 + 8 - 1) or r["preemptions"] > 0,
                 "every token computed once"),
            ]
            bad = [what for ok, what in checks if not ok]
            if bad:
                failures.append(f"{name}: {bad} in {r}")
            else:
                print(f"{name}: {r['output_tok_s']:.1f} output tok/s, TTFT p50 {r['ttft_ms_p50']} ms, "
                      f"peak {r['peak_kv_blocks']} of {r['kv_blocks'] - 1} blocks, {r['steps']} steps")
            return r

        per_request = (16 + 8) // BLOCK
        measure("offline", [], 8 * per_request)
        latency = measure("latency", ["--batch", 1], per_request)
        if latency and (latency["peak_kv_blocks"] != per_request or latency["steps"] != 8 * 8):
            failures.append(f"latency: expected peak {per_request} blocks and 64 steps: {latency}")

        cases = [(["--requests", 0, "--input-len", 16, "--output-len", 8], "--requests N with N >= 1"),
                 (["--requests", 1, "--input-len", 60, "--output-len", 8], "beyond the artifact's context"),
                 (["--requests", 1, "--input-len", 16], "--output-len N with N >= 1"),
                 (["--requests", 1, "--input-len", 16, "--output-len", 8, "--batch", -1], "--batch"),
                 ]
        for args, text in cases:
            proc = run(bench + args)
            if proc.returncode == 0 or text not in proc.stderr:
                failures.append(f"errors: {args} gave exit {proc.returncode}: {proc.stderr.strip()}")
            else:
                print(f"errors: {text!r} ok")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
