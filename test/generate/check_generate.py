#!/usr/bin/env python3
"""Generate check: compiles MODEL.onnx (--target cpu, small KV blocks) and runs
`infer-run generate --device cpu` over the step program and the paged KV cache:

  golden      the golden prompt alone reproduces NAME.greedy.json's greedy tokens (a step
              whose recorded top-2 margin is below 1e-3 may differ; from the first such
              step on nothing is compared)
  batched     several requests of different lengths together give each request's tokens
              when run alone (the reference: one invocation per request)
  chunked     the same with a tiny --max-batch-tokens (prompts split over steps)
  prefix      requests sharing a long prefix, run one after another in one invocation so
              the later ones hit the prefix cache (asserted), give the same tokens
  preemption  4x more requests than the KV pool holds at their longest all finish with
              the same tokens, and preemptions happened
  sampling    --temperature 0.8 --top-k 20 --seed 7: the requests batched give each request's
              tokens when run alone (each request's RNG is seeded from (seed, its index), so the
              reference runs each prompt at the index it has in the batch, padding with a
              one-token request), and --seed 8 changes at least one request
  errors      bad ids, empty prompts, prompts over the context, --device cuda on a cpu artifact
  rows        (--compare-rows, cuda 16-bit) two one-token prompts batched give each request's
              tokens alone, exactly: every step of the pair runs its GEMMs on the row GEMV's
              multi-row form (T = 2), whose output row t has the bits the one-row form gives
              input row t alone, and its other kernels work per sequence (three or four
              prompts run infer_gemv, whose bits differ from the row GEMV's)
  prefill     (--compare-prefill, cuda 16-bit) prompts of 23 to 50 tokens batched give the
              same first two tokens with the tensor-core paged prefill kernel as compiled with
              --no-prefill-kernel (the one-block-per-token kernel for every step). Later tokens
              are not compared: the two kernels round differently, the cached K/V of later
              layers inherit that, and a bf16 near-tie may then flip (seen on the H200)

With --device cuda (ctest label `gpu`; exit 77 without a GPU) the artifact is compiled with
--target cuda [--dtype D] and generate runs on the GPU; --golden-steps N compares only the
first N golden steps (bf16: 8).

  check_generate.py --infer-compile C --infer-run R --model M.onnx --greedy M.greedy.json
                    --inputs M.in0.npy M.in1.npy [--device cuda [--dtype bf16] [--golden-steps 8]]
"""
import argparse, ctypes, json, os, subprocess, sys, tempfile

import numpy as np

BLOCK = 4
MAX_SEQ_LEN = 64
NEW = 8


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


DEVICE = "cpu"


def gpu_present():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


def generate(infer_run, artifact, prompts, *extra):
    cmd = [infer_run, artifact, "generate", "--device", DEVICE, "--greedy",
           "--max-new-tokens", str(NEW)]
    for p in prompts:
        cmd += ["--prompt-ids", ",".join(map(str, p))]
    cmd += [str(e) for e in extra]
    proc = run(cmd)
    if proc.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--greedy", required=True)
    ap.add_argument("--inputs", nargs="+", default=[])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", choices=["fp32", "bf16", "fp16"])
    ap.add_argument("--compile-arg", action="append", default=[],
                    help="one more infer-compile argument (repeatable), e.g. --no-fuse=qkv-decode")
    ap.add_argument("--golden-steps", type=int, default=0, help="compare only the first N golden steps")
    ap.add_argument("--compare-prefill", action="store_true",
                    help="also run the prefill check (cuda, 16-bit artifacts)")
    ap.add_argument("--compare-rows", action="store_true",
                    help="also run the rows check (cuda, 16-bit artifacts)")
    ap.add_argument("--golden-only", action="store_true",
                    help="only the golden check (bf16: batch-size-dependent GEMM rounding may "
                         "legitimately flip near-ties between batched and lone runs)")
    a = ap.parse_args()
    global DEVICE
    DEVICE = a.device
    if a.device == "cuda" and not gpu_present():
        print("SKIP: no NVIDIA GPU")
        return 77
    golden = json.load(open(a.greedy))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "model.infer")
        compile_command = ([a.infer_compile, a.model, "--target", a.device,
                            "--kv-block-size", str(BLOCK), "--max-seq-len", str(MAX_SEQ_LEN)]
                           + (["--dtype", a.dtype] if a.dtype else []) + a.compile_arg)
        proc = run(compile_command + ["-o", artifact])
        if proc.returncode != 0 or "no step program" in proc.stderr:
            raise SystemExit(f"FAIL: compile\n{proc.stderr}")

        # golden: all 16 steps, alone.
        prompt = golden["prompt"]
        steps = golden["steps"]
        if a.golden_steps:
            steps = steps[: a.golden_steps]
        cmd = [a.infer_run, artifact, "generate", "--prompt-ids", ",".join(map(str, prompt)),
               "--max-new-tokens", str(len(steps)), "--greedy", "--device", a.device]
        proc = run(cmd)
        if proc.returncode != 0:
            raise SystemExit(f"FAIL: {' '.join(cmd)}\n{proc.stderr}")
        got = json.loads(proc.stdout.strip().splitlines()[-1])["requests"][0]["generated"]
        for i, step in enumerate(steps):
            if step["margin"] < 1e-3:
                print(f"golden: step {i} has margin {step['margin']:.2e} < 1e-3; not compared further")
                break
            if got[i] != step["token"]:
                failures.append(f"golden: step {i}: got {got[i]}, expected {step['token']} "
                                f"(margin {step['margin']:.3g}); got {got}")
                break
        else:
            print(f"golden: {len(steps)} tokens match")

        if a.compare_prefill:
            long_prompts = [(prompt * 10)[:n] for n in (40, 23, 50)]
            with_kernel = generate(a.infer_run, artifact, long_prompts)
            plain = os.path.join(tmp, "no-prefill-kernel.infer")
            proc = run(compile_command + ["-o", plain, "--no-prefill-kernel"])
            if proc.returncode != 0:
                raise SystemExit(f"FAIL: compile --no-prefill-kernel\n{proc.stderr}")
            without = generate(a.infer_run, plain, long_prompts)
            got = [r["generated"][:2] for r in with_kernel["requests"]]
            expected = [r["generated"][:2] for r in without["requests"]]
            if got != expected:
                failures.append(f"prefill: {got} with the prefill kernel, {expected} without")
            else:
                print(f"prefill: the first 2 tokens of {len(got)} requests of 23-50 prompt tokens match")

        if a.compare_rows:
            singles = [[t] for t in prompt[:2]]
            together = [r["generated"] for r in generate(a.infer_run, artifact, singles)["requests"]]
            apart = [generate(a.infer_run, artifact, [p])["requests"][0]["generated"] for p in singles]
            if together != apart:
                failures.append(f"rows: two one-token prompts batched {together} != alone {apart}")
            else:
                print(f"rows: two one-token prompts batched = alone ({NEW} tokens each)")

        if a.golden_only:
            for f in failures:
                print("FAIL:", f)
            return 1 if failures else 0
        prompts = [prompt]
        for path in a.inputs:
            prompts += [list(map(int, row)) for row in np.load(path)]
        # Shared prefixes: three blocks of the golden prompt + the first long row.
        base = (prompt + prompts[-1])[: 3 * BLOCK]
        shared = [base + [int(t) for t in p[:5]] for p in prompts[:3]]

        def alone(ps):
            return [generate(a.infer_run, artifact, [p], "--no-prefix-caching")["requests"][0]["generated"]
                    for p in ps]

        reference = alone(prompts)
        shared_reference = alone(shared)

        def compare(name, result, expected):
            got = [r["generated"] for r in result["requests"]]
            if got != expected:
                failures.append(f"{name}: got {got}, expected {expected}")
            else:
                print(f"{name}: {len(got)} requests match, {result['steps']} steps, "
                      f"{result['preemptions']} preemptions")

        compare("batched", generate(a.infer_run, artifact, prompts), reference)
        compare("chunked", generate(a.infer_run, artifact, prompts, "--max-batch-tokens", 3), reference)
        prefix = generate(a.infer_run, artifact, shared, "--max-sequences", 1)
        compare("prefix", prefix, shared_reference)
        cached = [r["cached_tokens"] for r in prefix["requests"]]
        if cached[0] != 0 or any(c < 3 * BLOCK for c in cached[1:]):
            failures.append(f"prefix: cached tokens {cached}, expected 0, then >= {3 * BLOCK}")

        # Preemption: the pool holds 2 of the longest requests; 4x as many requests.
        many = (prompts * 8)[:8]
        longest = max(len(p) for p in many) + NEW - 1
        blocks = 2 * -(-longest // BLOCK) + 1
        result = generate(a.infer_run, artifact, many, "--kv-blocks", blocks, "--no-prefix-caching")
        compare("preemption", result, (reference * 8)[:8])
        if result["preemptions"] == 0:
            failures.append("preemption: no request was preempted")

        # Sampling: seeded per request, so batching does not change a request's tokens.
        def sampled(ps, seed, *extra):
            cmd = [a.infer_run, artifact, "generate", "--device", DEVICE, "--max-new-tokens",
                   str(NEW), "--temperature", "0.8", "--top-k", "20", "--seed", str(seed)]
            for p in ps:
                cmd += ["--prompt-ids", ",".join(map(str, p))]
            proc = run(cmd + list(extra))
            if proc.returncode != 0:
                raise SystemExit(f"FAIL: {' '.join(cmd)}\n{proc.stderr}")
            return [r["generated"] for r in json.loads(proc.stdout.strip().splitlines()[-1])["requests"]]

        # On the GPU, batched and lone runs may round a logit differently (batch-size-dependent
        # GEMM algorithms), which could move a draw across a CDF boundary: cpu only.
        if DEVICE == "cpu":
            together = sampled(prompts, 7)
            # Request i alone: after i one-token fillers, so it keeps index i (its RNG stream),
            # and with --max-sequences 1 no other sequence shares its steps.
            apart = [sampled([[1]] * i + [p], 7, "--max-sequences", "1")[i] for i, p in enumerate(prompts)]
            other = sampled(prompts, 8)
            greedy_tokens = [r["generated"] for r in generate(a.infer_run, artifact, prompts)["requests"]]
            if together != apart:
                failures.append(f"sampling: batched {together} != alone {apart}")
            elif other == together:
                failures.append(f"sampling: --seed 8 gave the same tokens as --seed 7: {together}")
            elif together == greedy_tokens:
                failures.append("sampling: seeded sampling gave exactly the greedy tokens")
            else:
                print(f"sampling: {len(together)} requests batched = alone; another seed differs")

        # Decode steps enqueued before their predecessor's tokens are back (cuda): the same
        # steps run either way, so the same tokens, greedy and seeded.
        if DEVICE == "cuda":
            ahead = generate(a.infer_run, artifact, prompts)
            waiting = generate(a.infer_run, artifact, prompts, "--no-run-ahead")
            compare("run ahead (greedy)", ahead, [r["generated"] for r in waiting["requests"]])
            seeded, seeded_waiting = sampled(prompts, 7), sampled(prompts, 7, "--no-run-ahead")
            if ahead["steps_ahead"] == 0 or waiting["steps_ahead"] != 0:
                failures.append(f"run ahead: {ahead['steps_ahead']} steps ahead, "
                                f"{waiting['steps_ahead']} with --no-run-ahead")
            elif seeded != seeded_waiting:
                failures.append(f"run ahead (seeded): {seeded} != {seeded_waiting} without")
            else:
                print(f"run ahead: {ahead['steps_ahead']} steps ahead; greedy and seeded tokens "
                      "as without")

        # Errors.
        cases = [(["--prompt-ids", "1,x"], "is not a token id"),
                           (["--prompt-ids", "1,100000"], "outside the vocabulary"),
                           (["--prompt-ids", ""], "is empty"),
                           (["--prompt-ids", ",".join(["1"] * (MAX_SEQ_LEN + 1))],
                            "more than the artifact's context"),
                 (["--prompt-ids", "1", "--temperature", "-1"], "--temperature -1 must be"),
                 (["--prompt-ids", "1", "--top-k", "-2"], "--top-k -2 must be"),
                 (["--prompt-ids", "1", "--top-p", "1.5"], "--top-p 1.5 must be in (0, 1]"),
                 (["--prompt-ids", "1", "--greedy", "--temperature", "0.5"], "cannot be combined"),
                 ]
        if a.device == "cpu":
            cases.append((["--prompt-ids", "1", "--device", "cuda"], "has no GPU code"))
        for args, text in cases:
            device = [] if "--device" in args else ["--device", a.device]
            proc = run([a.infer_run, artifact, "generate"] + device + args)
            if proc.returncode == 0 or text not in proc.stderr:
                failures.append(f"errors: {args[:2]} gave exit {proc.returncode}: {proc.stderr.strip()}")
            else:
                print(f"errors: {text!r} ok")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
