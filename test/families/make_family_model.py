#!/usr/bin/env python3
"""Builds the tiny test model of a Hugging Face decoder family with its PyTorch goldens.

  make_family_model.py NAME [NAME ...] --out test/models [--list]

For each family of families.py: a random-weight model (seed 0, every parameter perturbed by
N(0, 0.02), as infer.export's --random-weights) is saved as a safetensors checkpoint and
exported by `python -m infer.export` (the path a user takes), its weights folded into one
NAME.onnx; then, from the same PyTorch model in fp32:
  NAME.in0.npy [2, 7], NAME.in1.npy [3, 11]  random input ids (seed 1)
  NAME.out0.npy, NAME.out1.npy               logits
  NAME.greedy.json                           16 greedy steps from in0[0], each with the margin
                                             between the top two logits
the same files as test/models/README.md describes for the other test models.
Needs torch, transformers, onnx (not run by the test suite: its outputs are committed).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from families import FAMILIES  # noqa: E402
sys.path.insert(0, os.path.join(REPO, "test", "models"))
import strip_metadata  # noqa: E402


def build(torch, transformers, config):
    cfg = transformers.AutoConfig.for_model(**config)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    if hasattr(model, "set_experts_implementation"):
        model.set_experts_implementation("batched_mm")
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    return model.eval()


def greedy(torch, model, prompt, steps=16):
    ids = torch.tensor([prompt])
    out = []
    with torch.no_grad():
        for _ in range(steps):
            logits = model(ids, use_cache=False).logits[0, -1]
            top = torch.topk(logits, 2)
            token = int(top.indices[0])
            out.append({"token": token, "margin": float(top.values[0] - top.values[1])})
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return {"prompt": prompt, "steps": out}


def make(name, out_dir):
    import numpy as np
    import onnx
    import torch
    import transformers
    config, _ = FAMILIES[name]
    model = build(torch, transformers, config)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "ckpt")
        model.save_pretrained(ckpt)
        exported = os.path.join(tmp, "onnx")
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
        proc = subprocess.run([sys.executable, "-m", "infer.export", ckpt, "-o", exported],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"{name}: infer.export failed:\n{proc.stderr[-2000:]}")
        onnx_model = onnx.load(os.path.join(exported, "model.onnx"), load_external_data=True)
        onnx.save(strip_metadata.strip(onnx_model), os.path.join(out_dir, f"tiny-{name}.onnx"))
    rng = np.random.default_rng(1)
    vocab = config["vocab_size"]
    with torch.no_grad():
        for i, shape in enumerate([(2, 7), (3, 11)]):
            ids = rng.integers(3, vocab, size=shape, dtype=np.int64)
            np.save(os.path.join(out_dir, f"tiny-{name}.in{i}.npy"), ids)
            logits = model(torch.from_numpy(ids), use_cache=False).logits.float().numpy()
            np.save(os.path.join(out_dir, f"tiny-{name}.out{i}.npy"), logits)
            if i == 0:
                prompt = [int(t) for t in ids[0]]
    with open(os.path.join(out_dir, f"tiny-{name}.greedy.json"), "w") as f:
        json.dump(greedy(torch, model, prompt), f)
    size = os.path.getsize(os.path.join(out_dir, f"tiny-{name}.onnx"))
    print(f"{name}: wrote tiny-{name}.onnx ({size} bytes) and its goldens")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--out", default=os.path.join(REPO, "test", "models"))
    ap.add_argument("--list", action="store_true", help="list the families and their features")
    a = ap.parse_args()
    if a.list or not a.names:
        for name, (_, features) in FAMILIES.items():
            print(f"{name:16} {features}")
        return 0
    unknown = [n for n in a.names if n not in FAMILIES]
    if unknown:
        ap.error(f"unknown families: {', '.join(unknown)} (--list)")
    os.makedirs(a.out, exist_ok=True)
    for name in a.names:
        make(name, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
