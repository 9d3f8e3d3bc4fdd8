#!/usr/bin/env python3
"""Bench check: compiles MODEL.onnx (--target cpu) and runs `infer-run bench --device cpu`:

  offline   --requests 8 --input-len 16 --output-len 8 exits 0; its JSON line parses; 64 output
            tokens, output tok/s > 0, TTFT p50 <= p99, TPOT p50 <= p99, peak KV blocks within
            the pool (and at least what 8 requests of 24 tokens need at once); the load's
            phases (cpu: open, backend) add up to load_s, which the process's wall as Python
            measured it bounds
  latency   --batch 1: one request at a time, so the peak is one request's blocks
  rate      --rate 4: Poisson arrivals, a longer run than offline, ITL p50 <= p99
  errors    0 requests, input-len + output-len beyond the context, no --output-len, a
            negative --rate, --rate with --batch
  int4      tiny-llama compiled --quantize int4 --group-size 16: the JSON names the scheme and
            counts the quantized bytes and scales a step streams (the roofline's bytes)

  check_bench.py --infer-compile C --infer-run R --model M.onnx
"""
import argparse, json, os, subprocess, sys, tempfile, time

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
        # tiny-llama's GEMMs from its config (hidden 64, 2 layers, 4 heads and 2 KV
        # heads of 16, MLP 160, vocab 512; fp32): per layer q/k/v 64 x 128, o 64 x 64,
        # gate/up 64 x 320, down 160 x 64, then the LM head 64 x 512 per logit row.
        per_layer = 64 * 128 + 64 * 64 + 64 * 320 + 160 * 64
        expected_costs = ((2 * per_layer + 64 * 512) * 4, 2 * per_layer, 64 * 512) \
            if os.path.basename(a.model) == "tiny-llama.onnx" else None

        def measure(name, extra, need_blocks):
            start = time.monotonic()
            proc = run(bench + ["--requests", 8, "--input-len", 16, "--output-len", 8] + extra)
            process_s = time.monotonic() - start
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
                # The H200 roofline: each step streams the GEMM weights once, so the
                # floor is at least steps x bytes / 4.3 TB/s, and the ceiling is the
                # output tokens over the floor.
                # (the JSON rounds the floor to 1e-9 s)
                (r["h200_floor_s"] >= r["steps"] * r["gemm_weight_bytes"] / 4.3e12 * (1 - 1e-6) - 5e-10,
                 "floor >= steps x GEMM weight bytes / 4.3 TB/s"),
                (abs(r["h200_ceiling_output_tok_s"] * r["h200_floor_s"] - r["output_tokens"])
                 <= 1e-3 * r["output_tokens"], "ceiling = output tokens / floor"),
                # The cold start by phase (each rounded to 1e-4 s).
                (list(r["load_phases_s"]) == ["open", "backend"]
                 and abs(sum(r["load_phases_s"].values()) - r["load_s"]) <= 3e-4
                 and 0 < r["load_s"] < process_s, "load phases open, backend sum to load_s "
                 f"< the process's {process_s:.3f} s"),
            ]
            if expected_costs:
                checks.append(((r["gemm_weight_bytes"], r["gemm_macs_per_token"],
                                r["gemm_macs_per_logit_row"]) == expected_costs,
                               f"GEMM bytes, MACs per token and per logit row {expected_costs}"))
            bad = [what for ok, what in checks if not ok]
            if bad:
                failures.append(f"{name}: {bad} in {r}")
            else:
                print(f"{name}: {r['output_tok_s']:.1f} output tok/s, TTFT p50 {r['ttft_ms_p50']} ms, "
                      f"peak {r['peak_kv_blocks']} of {r['kv_blocks'] - 1} blocks, {r['steps']} steps")
            return r

        per_request = (16 + 8) // BLOCK
        offline = measure("offline", [], 8 * per_request)
        if offline and offline.get("quantize") != "":
            failures.append(f"offline: an unquantized artifact's bench says quantize "
                            f"{offline.get('quantize')!r}")
        if expected_costs:
            # --quantize int4 --group-size 16: the quantized linears stream n*k/2 bytes and
            # n*k/16 f32 scales each (the LM head stays fp32); the MACs do not change.
            quantized = os.path.join(tmp, "int4.infer")
            proc = run([a.infer_compile, a.model, "-o", quantized, "--target", "cpu",
                        "--kv-block-size", BLOCK, "--max-seq-len", MAX_SEQ_LEN,
                        "--quantize", "int4", "--group-size", 16])
            if proc.returncode != 0:
                raise SystemExit(f"FAIL: compile --quantize int4\n{proc.stderr}")
            linears = [(64, 128), (64, 64), (64, 320), (160, 64)]
            int4_bytes = 2 * sum(n * k // 2 + n * (k // 16) * 4 for k, n in linears) + 64 * 512 * 4
            proc = run([a.infer_run, quantized, "bench", "--device", "cpu", "--requests", 2,
                        "--input-len", 8, "--output-len", 4])
            r = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {}
            want = ("int4 g16 rtn", int4_bytes, expected_costs[1], expected_costs[2])
            got = tuple(r.get(key) for key in ("quantize", "gemm_weight_bytes", "gemm_macs_per_token",
                                               "gemm_macs_per_logit_row"))
            if got != want:
                failures.append(f"int4: (quantize, GEMM bytes, MACs per token, per logit row) "
                                f"{got} != {want}: exit {proc.returncode} {proc.stderr.strip()}")
            else:
                print(f"int4: quantize {got[0]!r}, {got[1]} GEMM weight bytes a step "
                      f"(fp32: {expected_costs[0]})")
        latency = measure("latency", ["--batch", 1], per_request)
        if latency and (latency["peak_kv_blocks"] != per_request or latency["steps"] != 8 * 8):
            failures.append(f"latency: expected peak {per_request} blocks and 64 steps: {latency}")

        # --rate: Poisson arrivals (seeded), each request submitted at its arrival. At 4
        # requests/s the 8 arrivals span about 1.75 s, so the run takes longer than offline
        # and serves fewer requests a second; every token and ITL is still counted.
        paced = measure("rate", ["--rate", 4], per_request)
        if offline and paced:
            ok = (paced["rate"] == 4 and paced["wall_s"] > 0.5 and offline["wall_s"] < paced["wall_s"]
                  and paced["requests_per_s"] < offline["requests_per_s"]
                  and 0 < paced["itl_ms_p50"] <= paced["itl_ms_p99"])
            if ok:
                print(f"rate: 4 requests/s served {paced['requests_per_s']} requests/s over "
                      f"{paced['wall_s']} s, ITL p50 {paced['itl_ms_p50']} ms")
            else:
                failures.append(f"rate: expected a paced run (wall > 0.5 s, longer than offline's "
                                f"{offline['wall_s']} s, ITL p50 <= p99): {paced}")

        cases = [(["--requests", 0, "--input-len", 16, "--output-len", 8], "--requests N with N >= 1"),
                 (["--requests", 1, "--input-len", 16, "--output-len", 8, "--rate", -1], "--rate must be"),
                 (["--requests", 1, "--input-len", 16, "--output-len", 8, "--rate", 2, "--batch", 2],
                  "--rate and --batch"),
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
