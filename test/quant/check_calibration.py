#!/usr/bin/env python3
"""Checks `infer-compile --quantize ... --calibration FILE`'s accuracy report against an
independent computation: the prompts tokenized by the `tokenizers` library, the unquantized model
and its QDQ reference (quantize_reference.py) run by ONNX Runtime, top-1 agreement, mean
KL(unquantized || quantized) and both perplexities computed here in float64.

  check_calibration.py --infer-compile C --model M.onnx --calibration FILE --scheme int4
                       [--group-size G] [--tokenizer-dir DIR]

PASS when our perplexities are within 1e-4 relative, our KL within 2e-3 relative (+1e-8), and our
top-1 agreement within 2 positions of the reference's. Also checks that --accuracy-gate fails the
compile (exit 1, no artifact) when set below the measured KL and passes it when set above.
"""
import argparse, math, os, re, subprocess, sys, tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantize_reference as qr  # noqa: E402

MAX_PROMPTS, MAX_TOKENS = 64, 256  # tools/infer-compile/Calibration.h
LINE = re.compile(r"quantization \(.*\) on (\d+) calibration prompts, (\d+) positions: top-1 agreement "
                  r"([0-9.]+)%, mean KL ([0-9.e+-]+) nats, perplexity ([0-9.]+) -> ([0-9.]+)")


def log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def reference(model_path, prompts, scheme, group):
    import onnx
    quantized, _, _ = qr.quantize_model(onnx.load(model_path), scheme, group)
    agree = positions = predicted = 0
    kl = nll = qnll = 0.0
    for ids in prompts:
        feed = {"input_ids": np.array([ids], dtype=np.int64)}
        p = log_softmax(qr.run_model(model_path, feed)[0])
        q = log_softmax(qr.run_model(quantized, feed)[0])
        kl += float((np.exp(p) * (p - q)).sum())
        agree += int((p.argmax(-1) == q.argmax(-1)).sum())
        nxt = np.array(ids[1:])
        nll -= float(p[np.arange(len(nxt)), nxt].sum())
        qnll -= float(q[np.arange(len(nxt)), nxt].sum())
        positions += len(ids)
        predicted += len(nxt)
    return dict(prompts=len(prompts), positions=positions, top1=agree / positions, kl=kl / positions,
                ppl=math.exp(nll / predicted), qppl=math.exp(qnll / predicted))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--calibration", required=True)
    ap.add_argument("--scheme", required=True, choices=["int4", "fp8"])
    ap.add_argument("--group-size", type=int)
    ap.add_argument("--tokenizer-dir")
    a = ap.parse_args()
    tok_dir = a.tokenizer_dir or os.path.dirname(os.path.abspath(a.model))
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(tok_dir, "tokenizer.json"))
    lines = [l for l in open(a.calibration, encoding="utf-8").read().split("\n") if l.strip(" \t\r")]
    prompts = [tok.encode(l, add_special_tokens=True).ids[:MAX_TOKENS] for l in lines[:MAX_PROMPTS]]
    ref = reference(a.model, prompts, a.scheme, a.group_size)

    quant = ["--quantize", a.scheme] + (["--group-size", str(a.group_size)] if a.group_size else [])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "q.infer")
        cmd = [a.infer_compile, a.model, "--target", "cpu", *quant, "--calibration", a.calibration,
               "--tokenizer", tok_dir, "-o", out]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        match = LINE.search(proc.stderr)
        if proc.returncode != 0 or not match or not os.path.exists(out):
            print(f"FAIL: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
            return 1
        prompts_n, positions, top1, kl, ppl, qppl = match.groups()
        got = dict(prompts=int(prompts_n), positions=int(positions), top1=float(top1) / 100,
                   kl=float(kl), ppl=float(ppl), qppl=float(qppl))
        problems = []
        if (got["prompts"], got["positions"]) != (ref["prompts"], ref["positions"]):
            problems.append(f"prompts/positions {got['prompts']}/{got['positions']} != "
                            f"{ref['prompts']}/{ref['positions']}")
        if abs(got["top1"] - ref["top1"]) * ref["positions"] > 2.5:
            problems.append(f"top-1 agreement {got['top1']:.4f} vs {ref['top1']:.4f}")
        if abs(got["kl"] - ref["kl"]) > 2e-3 * ref["kl"] + 1e-8:
            problems.append(f"mean KL {got['kl']:.6g} vs {ref['kl']:.6g}")
        for key in ("ppl", "qppl"):
            # The printed value has 3 decimals.
            if abs(got[key] - ref[key]) > 1e-4 * ref[key] + 6e-4:
                problems.append(f"{key} {got[key]:.4f} vs {ref[key]:.4f}")
        # The gate: below the measured KL fails without an artifact, above it passes.
        gated = os.path.join(tmp, "gated.infer")
        below = subprocess.run(cmd[:-1] + [gated, "--accuracy-gate", f"{ref['kl'] * 0.5:.6g}"],
                               capture_output=True, text=True)
        if below.returncode != 1 or "--accuracy-gate" not in below.stderr or os.path.exists(gated):
            problems.append(f"--accuracy-gate below the KL: exit {below.returncode}, {below.stderr.strip()}")
        above = subprocess.run(cmd[:-1] + [gated, "--accuracy-gate", f"{ref['kl'] * 2 + 1e-6:.6g}"],
                               capture_output=True, text=True)
        if above.returncode != 0 or not os.path.exists(gated):
            problems.append(f"--accuracy-gate above the KL: exit {above.returncode}, {above.stderr.strip()}")
    what = f"{os.path.basename(a.model)} {a.scheme}" + (f" G={a.group_size}" if a.group_size else "")
    summary = (f"{ref['prompts']} prompts, {ref['positions']} positions: top-1 {got['top1']:.4f} "
               f"(ORT {ref['top1']:.4f}), KL {got['kl']:.4g} (ORT {ref['kl']:.4g}), perplexity "
               f"{got['ppl']:.3f} -> {got['qppl']:.3f} (ORT {ref['ppl']:.3f} -> {ref['qppl']:.3f})")
    if problems:
        print(f"FAIL: {what}: {summary}; " + "; ".join(problems))
        return 1
    print(f"PASS: {what}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
