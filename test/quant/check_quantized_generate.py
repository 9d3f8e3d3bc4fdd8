#!/usr/bin/env python3
"""Greedy generation of a quantized artifact on the GPU (the step program: paged KV, decode steps
of one token, a prefill chunk) against the same artifact on the cpu backend, whose quantized GEMM
check_quantized.py holds to ONNX Runtime's QDQ reference. Compiles MODEL with `--target cuda
--dtype fp32 --quantize ...`, generates --max-new-tokens greedy tokens for each prompt on both
devices (batched together), and PASSes when every request's ids are the same on both.

  check_quantized_generate.py --infer-compile C --infer-run R --model DIR/model.onnx
      --prompt TEXT [--prompt TEXT ...] --compile-arg=--quantize --compile-arg=int4 ...

Exits 77 (ctest SKIP) without a GPU.
"""
import argparse, json, os, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_quantized import SKIP, gpu_present  # noqa: E402
from quantize_reference import run_tool  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt", action="append", required=True)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--compile-arg", action="append", default=[])
    a = ap.parse_args()
    if not gpu_present():
        print("SKIP: no usable NVIDIA GPU")
        return SKIP
    what = f"{os.path.basename(os.path.dirname(a.model))} {' '.join(a.compile_arg)}"
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "q.infer")
        cmd = [a.infer_compile, a.model, "-o", artifact, "--target", "cuda", "--dtype", "fp32"] + a.compile_arg
        run_tool(cmd)
        ids = {}
        for device in ("cpu", "cuda"):
            cmd = [a.infer_run, artifact, "generate", "--device", device, "--greedy", "--ignore-eos",
                   "--max-new-tokens", str(a.max_new_tokens), "--output", "json"]
            for prompt in a.prompt:
                cmd += ["--prompt", prompt]
            proc = run_tool(cmd)
            lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
            ids[device] = [r["generated"] for line in lines for r in line.get("requests", [])]
    if len(ids["cpu"]) != len(a.prompt) or len(ids["cuda"]) != len(a.prompt):
        print(f"FAIL: {what}: expected {len(a.prompt)} JSON lines per device, got "
              f"{len(ids['cpu'])} (cpu) and {len(ids['cuda'])} (cuda)")
        return 1
    same = sum(c == g for c, g in zip(ids["cpu"], ids["cuda"]))
    ok = same == len(a.prompt)
    first = next(((i, c, g) for i, (c, g) in enumerate(zip(ids["cpu"], ids["cuda"])) if c != g), None)
    detail = "" if ok else f"; request {first[0]}: cpu {first[1]} vs cuda {first[2]}"
    print(f"{'PASS' if ok else 'FAIL'}: {what}: greedy ids of {same} of {len(a.prompt)} requests "
          f"({a.max_new_tokens} new tokens each) the same on cuda as on cpu{detail}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
