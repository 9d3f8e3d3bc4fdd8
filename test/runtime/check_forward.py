#!/usr/bin/env python3
"""Runtime golden check: compiles MODEL.onnx to an artifact (--target cpu), runs
`infer-run forward --device cpu` on a golden input and compares the logits with PyTorch's
(max abs difference within --atol; with --relative, divided by the golden's largest
magnitude, for low-precision models against fp32 goldens). With --expect-error TEXT the
run must instead fail (exit 1) with TEXT in its error message. With --against-reference
the expected logits are the reference interpreter's (`infer-compile M.onnx --emit=optimized`
fed back with --reference-run) instead of --golden.

  check_forward.py --infer-compile C --infer-run R --model M.onnx --input M.in0.npy
                   --golden M.out0.npy [--atol 1e-4] [--relative] [--compile-arg=--max-batch-tokens=4]
                   [--input-name input_ids] [--expect-error TEXT] [--against-reference]
"""
import argparse, os, subprocess, sys, tempfile

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--golden")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--relative", action="store_true",
                    help="compare the max abs error relative to the golden's max magnitude "
                         "(for low-precision models against fp32 goldens)")
    ap.add_argument("--compile-arg", action="append", default=[])
    ap.add_argument("--input-name", default="input_ids")
    ap.add_argument("--expect-error")
    ap.add_argument("--against-reference", action="store_true",
                    help="compare with the reference interpreter's logits on the optimized IR")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "model.infer")
        cmd = [a.infer_compile, a.model, "-o", artifact, "--target", "cpu"] + a.compile_arg
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"FAIL: {' '.join(cmd)} exited {proc.returncode}\n{proc.stderr}")
            return 1
        out = os.path.join(tmp, "logits.npy")
        cmd = [a.infer_run, artifact, "forward", "--device", "cpu",
               "--input", f"{a.input_name}={a.input}", "--output", f"logits={out}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if a.expect_error is not None:
            ok = proc.returncode == 1 and a.expect_error in proc.stderr
            print(f"{'PASS' if ok else 'FAIL'}: exit {proc.returncode}, stderr: {proc.stderr.strip()}")
            return 0 if ok else 1
        if proc.returncode != 0:
            print(f"FAIL: {' '.join(cmd)} exited {proc.returncode}\n{proc.stderr}")
            return 1
        golden = a.golden
        if a.against_reference:
            mlir, golden = os.path.join(tmp, "model.mlir"), os.path.join(tmp, "reference.npy")
            with open(mlir, "w") as f:
                subprocess.run([a.infer_compile, a.model, "--emit=optimized"], stdout=f, check=True)
            cmd = [a.infer_compile, mlir, "--reference-run", f"--input={a.input_name}={a.input}",
                   f"--output=logits={golden}"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"FAIL: {' '.join(cmd)} exited {proc.returncode}\n{proc.stderr}")
                return 1
        got, want = np.load(out), np.load(golden)
    if got.shape != want.shape:
        print(f"FAIL: shape {got.shape} != golden {want.shape}")
        return 1
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    if a.relative and want.size:
        err /= float(np.max(np.abs(want)))
    status = "PASS" if err <= a.atol else "FAIL"
    against = " vs the reference interpreter" if a.against_reference else ""
    print(f"{status}: {os.path.basename(a.model)} on {os.path.basename(a.input)} (infer-run --device cpu{against}): "
          f"max {'relative' if a.relative else 'abs'} error {err:.3g} (tolerance {a.atol:g}), logits {tuple(got.shape)}")
    return 0 if err <= a.atol else 1


if __name__ == "__main__":
    sys.exit(main())
