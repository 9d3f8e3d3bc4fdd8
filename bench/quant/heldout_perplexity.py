#!/usr/bin/env python3
"""Held-out perplexity of a model compiled with each quantization scheme (issue 48's table).

  heldout_perplexity.py --infer-compile C --infer-run R --model M.onnx --heldout TXT
                        --calibration TXT [--windows 64] [--window 128] [--group-sizes 32,64,128]

The held-out text is tokenized whole by the model's tokenizer.json (`tokenizers`), cut into
non-overlapping windows; each configuration is compiled for the cpu backend and run by
`infer-run forward`, and the perplexity of every window's tokens 2..W given the ones before is
computed here in float64. AWQ calibrates on --calibration (text kept out of the held-out set).
Prints a Markdown table with each perplexity relative to bf16's.
"""
import argparse, math, os, subprocess, sys, tempfile

import numpy as np


def perplexity(logits, ids):
    x = logits[:, :-1].astype(np.float64)
    m = x.max(-1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))
    nxt = ids[:, 1:]
    nll = -np.take_along_axis(logp, nxt[..., None], -1)[..., 0]
    return math.exp(nll.mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag in ("--infer-compile", "--infer-run", "--model", "--heldout", "--calibration"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--windows", type=int, default=64)
    ap.add_argument("--window", type=int, default=128)
    ap.add_argument("--group-sizes", default="32,64,128")
    ap.add_argument("--only", help="comma-separated configuration names to run (bf16 always runs: "
                                   "the table is relative to it)")
    a = ap.parse_args()
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(os.path.dirname(os.path.abspath(a.model)), "tokenizer.json"))
    ids = tok.encode(open(a.heldout, encoding="utf-8").read()).ids
    n = min(a.windows, len(ids) // a.window)
    windows = np.array(ids[: n * a.window], dtype=np.int64).reshape(n, a.window)
    configs = [("fp32", []), ("bf16", ["--dtype", "bf16"]), ("fp8 W8A8", ["--quantize", "fp8"]),
               ("bf16 + fp8 KV", ["--dtype", "bf16", "--kv-cache-dtype", "fp8",
                                       "--calibration", a.calibration]),
               ("fp8 W8A8 + fp8 KV", ["--quantize", "fp8", "--kv-cache-dtype", "fp8",
                                           "--calibration", a.calibration])]
    for g in [int(v) for v in a.group_sizes.split(",")]:
        for method in ("rtn", "awq"):
            extra = ["--calibration", a.calibration] if method == "awq" else []
            configs.append((f"int4 g{g} {method.upper()}",
                            ["--quantize", "int4", "--group-size", str(g), "--method", method] + extra))
    # The LM head quantized too (--quantize-lm-head), for each scheme above.
    configs += [(name + " + LM head", flags + ["--quantize-lm-head"])
                for name, flags in list(configs) if "--quantize" in flags]
    if a.only:
        keep = {"bf16"} | {name.strip() for name in a.only.split(",")}
        configs = [c for c in configs if c[0] in keep]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "ids.npy")
        for name, flags in configs:
            art, out = os.path.join(tmp, "m.infer"), os.path.join(tmp, "logits.npy")
            cmd = [a.infer_compile, a.model, "--target", "cpu", *flags, "-o", art]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                rows.append((name, None, f"compile failed: {proc.stderr.strip().splitlines()[-1]}"))
                continue
            note = next((l for l in proc.stderr.splitlines() if l.startswith(("awq:", "kv cache"))), "")
            nll, failed = [], None
            for start in range(0, n, 64):  # 64 x 128 tokens: within the artifact's 8192 bound
                np.save(inp, windows[start:start + 64])
                cmd = [a.infer_run, art, "forward", "--input", f"input_ids={inp}", "--output",
                       f"logits={out}", "--device", "cpu"]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    failed = f"forward failed: {proc.stderr.strip()}"
                    break
                chunk = windows[start:start + 64]
                nll.append(math.log(perplexity(np.load(out), chunk)) * chunk.shape[0])
            if failed:
                rows.append((name, None, failed))
                continue
            rows.append((name, math.exp(sum(nll) / n), note))
    base = dict((r[0], r[1]) for r in rows).get("bf16")
    print(f"held-out: {n} windows of {a.window} tokens ({n * (a.window - 1)} predictions), "
          f"vocabulary {tok.get_vocab_size()} (uniform perplexity {tok.get_vocab_size()})\n")
    print("| configuration | held-out perplexity | vs bf16 | note |")
    print("|---|---|---|---|")
    for name, ppl, note in rows:
        rel = f"{100 * (ppl / base - 1):+.2f}%" if ppl and base else "-"
        print(f"| {name} | {ppl:.3f} | {rel} | {note} |" if ppl else f"| {name} | - | - | {note} |")
    return 0 if all(r[1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
