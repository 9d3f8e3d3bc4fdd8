#!/usr/bin/env python3
"""Writes test/models/tiny-NAME.bf16.json: how far PyTorch's own bf16 run of a family's tiny model
lies from its fp32 goldens (max abs error over max |golden|, per golden input).

A mixture-of-experts router is discontinuous: in bf16 a near-tie between two experts may flip, so
PyTorch's bf16 logits of tiny-mixtral are already 3.8% (relative) from its fp32 goldens, where a
dense model's are 0.7%. test/gpu/check_gpu.py then allows a bf16 cuda run 1.5 times PyTorch's own
deviation (never less than its default 3%). Needs torch and transformers; the model is rebuilt
exactly as make_family_model.py builds it (seed 0).

  bf16_deviation.py NAME... [--models test/models]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from families import FAMILIES  # noqa: E402
import make_family_model  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="+")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                    "test", "models"))
    a = ap.parse_args()
    import numpy as np
    import torch
    import transformers
    for name in a.names:
        if name not in FAMILIES:
            ap.error(f"unknown family {name}")
        model = make_family_model.build(torch, transformers, FAMILIES[name][0]).to(torch.bfloat16)
        deviations = []
        for i in range(2):
            ids = np.load(os.path.join(a.models, f"tiny-{name}.in{i}.npy"))
            gold = np.load(os.path.join(a.models, f"tiny-{name}.out{i}.npy"))
            with torch.no_grad():
                got = model(torch.from_numpy(ids), use_cache=False).logits.float().numpy()
            deviations.append(float(np.abs(got - gold).max() / np.abs(gold).max()))
        path = os.path.join(a.models, f"tiny-{name}.bf16.json")
        with open(path, "w") as f:
            json.dump({"torch_bf16_relative_error": deviations}, f)
            f.write("\n")
        print(f"{name}: PyTorch bf16 relative error {deviations[0]:.4f} / {deviations[1]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
