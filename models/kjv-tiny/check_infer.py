#!/usr/bin/env python3
"""Checks infer's logits for kjv-tiny against onnxruntime and (when given) the PyTorch checkpoint.

  build/bin/infer-compile models/kjv-tiny/model.onnx --target cpu -o /tmp/kjv.infer
  python3 models/kjv-tiny/check_infer.py /tmp/kjv.infer [--infer-run build/bin/infer-run]
                                         [--checkpoint /tmp/kjv-tiny-checkpoint] [--windows 2]

Takes the first --windows non-overlapping 128-token windows of heldout.txt (encoded as train.py
does: each chapter is <|endoftext|> + its verses joined by "\\n"), runs them as one batch through
`infer-run forward --device cpu`, through onnxruntime on model.onnx and, with --checkpoint,
through transformers' LlamaForCausalLM, and prints the largest absolute logit differences.
Exit status 1 when infer is further than --tol (default 1e-4) from a reference.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SEQ = 128


def heldout_windows(n, d):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    text = open(os.path.join(d, "heldout.txt"), encoding="utf-8").read()
    ids = []
    for chapter in text.rstrip("\n").split("\n\n"):
        ids.append(0)
        ids.extend(tok.encode(chapter, add_special_tokens=False).ids)
    return np.array([ids[i * SEQ:(i + 1) * SEQ] for i in range(n)], dtype=np.int64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("artifact", help="the .infer file compiled from model.onnx")
    ap.add_argument("--infer-run", default=os.path.join(REPO, "build", "bin", "infer-run"))
    ap.add_argument("--checkpoint", help="the Hugging Face checkpoint train.py wrote (--work)")
    ap.add_argument("--dir", default=HERE, help="the model directory (default: this script's)")
    ap.add_argument("--windows", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()
    x = heldout_windows(args.windows, args.dir)
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "x.npy"), x)
        subprocess.run([args.infer_run, args.artifact, "forward", "--input", f"input_ids={d}/x.npy",
                        "--output", f"logits={d}/y.npy", "--device", "cpu"], check=True)
        got = np.load(os.path.join(d, "y.npy")).astype(np.float64)
    refs = {}
    import onnxruntime as ort
    sess = ort.InferenceSession(os.path.join(args.dir, "model.onnx"), providers=["CPUExecutionProvider"])
    refs["onnxruntime"] = sess.run(["logits"], {"input_ids": x})[0]
    if args.checkpoint:
        import torch
        from transformers import LlamaForCausalLM
        model = LlamaForCausalLM.from_pretrained(args.checkpoint).eval()
        with torch.no_grad():
            refs["pytorch"] = model(input_ids=torch.from_numpy(x)).logits.numpy()
    ok = True
    print(f"input {x.shape}, logits {got.shape}, logit range [{got.min():.2f}, {got.max():.2f}]")
    for name, ref in refs.items():
        diff = np.abs(got - ref.astype(np.float64))
        agree = (got.argmax(-1) == ref.argmax(-1)).mean()
        print(f"infer vs {name}: max abs diff {diff.max():.3g}, mean {diff.mean():.3g}, "
              f"argmax agreement {agree:.4f}")
        ok &= bool(diff.max() <= args.tol)
    if "pytorch" in refs:
        d = np.abs(refs["onnxruntime"].astype(np.float64) - refs["pytorch"]).max()
        print(f"onnxruntime vs pytorch: max abs diff {d:.3g}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
