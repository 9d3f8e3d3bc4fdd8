#!/usr/bin/env python3
"""End-to-end golden check: runs `infer-compile MODEL --reference-run` on a golden input and
compares the logits with PyTorch's (max abs difference within --atol).

  check_golden.py --infer-compile BIN --model M.onnx --input M.in0.npy --golden M.out0.npy [--atol 1e-4]
"""
import argparse, os, subprocess, sys, tempfile

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--golden", required=True)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--relative", action="store_true",
                    help="compare the max abs error relative to the golden's max magnitude "
                         "(for low-precision models against fp32 goldens)")
    ap.add_argument("--via", choices=["onnx", "graph", "optimized"], default="onnx",
                    help="run the model itself, or the IR printed by --emit=graph or --emit=optimized "
                         "fed back as an .mlir file")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = a.model
        if a.via != "onnx":
            model = os.path.join(tmp, "model.mlir")
            with open(model, "w") as f:
                subprocess.run([a.infer_compile, a.model, f"--emit={a.via}"], stdout=f, check=True)
        out = os.path.join(tmp, "logits.npy")
        cmd = [a.infer_compile, model, "--reference-run", f"--input=input_ids={a.input}", f"--output=logits={out}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"FAIL: {' '.join(cmd)} exited {proc.returncode}\n{proc.stderr}")
            return 1
        got, want = np.load(out), np.load(a.golden)
    if got.shape != want.shape:
        print(f"FAIL: shape {got.shape} != golden {want.shape}")
        return 1
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    if a.relative and want.size:
        err /= float(np.max(np.abs(want)))
    status = "PASS" if err <= a.atol else "FAIL"
    print(f"{status}: {os.path.basename(a.model)} (via {a.via}) on {os.path.basename(a.input)}: "
          f"max {'relative' if a.relative else 'abs'} error {err:.3g} (tolerance {a.atol:g}), "
          f"logits {tuple(got.shape)}")
    return 0 if err <= a.atol else 1


if __name__ == "__main__":
    sys.exit(main())
